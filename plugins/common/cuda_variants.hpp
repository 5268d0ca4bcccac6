// The two CUDA variants most lessons have, written once for their problem classes:
//   cuda_lesson<Run>: as the lessons did it: device memory allocated and the inputs copied in
//     on every repetition (transfer_in), the output copied back and the memory freed
//     (transfer_out), with Run::lesson_kernel;
//   cuda_resident<Run, Kernel>: device memory allocated and the inputs copied once in setup; a
//     repetition is the kernel alone; the output is copied back to validate.
// Run is the plugin's problem class (a variant_run made from a point, owning the host data).
// It names its device object and provides the steps, protected is enough:
//
//   using gpu = gpu_transpose;                              // the .cu side's class
//   static constexpr gpu_kernel lesson_kernel = gpu_kernel::tiled;
//   void make_inputs();                                     // host inputs (setup)
//   std::unique_ptr<gpu> make_gpu(int device, gpu_kernel k) const; // allocates
//   void upload(gpu& g);                                    // inputs host -> device
//   void launch(gpu& g, gpu_kernel k);                      // the kernel, synchronized
//   void download(gpu& g);                                  // output device -> host
//   validation check_result();                              // the output, judged
//
//   cuda::variant<cuda_resident<transpose_run, gpu_kernel::naive>>("cuda-naive", "...")
#pragma once

#include <memory>

#include <speedlab/plugin.hpp>

namespace speedlab::plugins {

template <class Run>
class cuda_lesson final : public Run {
public:
  cuda_lesson(const point& p, const run_context& c) : Run(p), m_device(c.device) {}
  void setup() override { this->make_inputs(); }
  void transfer_in() override {
    m_gpu = this->make_gpu(m_device, Run::lesson_kernel);
    this->upload(*m_gpu);
  }
  void compute() override { this->launch(*m_gpu, Run::lesson_kernel); }
  void transfer_out() override {
    this->download(*m_gpu);
    m_gpu.reset();
  }
  validation validate() override { return this->check_result(); }
  void teardown() override { m_gpu.reset(); }

private:
  int m_device;
  std::unique_ptr<typename Run::gpu> m_gpu;
};

template <class Run, auto Kernel>
class cuda_resident final : public Run {
public:
  cuda_resident(const point& p, const run_context& c) : Run(p), m_device(c.device) {}
  void setup() override {
    this->make_inputs();
    m_gpu = this->make_gpu(m_device, Kernel);
    this->upload(*m_gpu);
  }
  void compute() override { this->launch(*m_gpu, Kernel); }
  validation validate() override {
    this->download(*m_gpu);
    return this->check_result();
  }
  void teardown() override { m_gpu.reset(); }

private:
  int m_device;
  std::unique_ptr<typename Run::gpu> m_gpu;
};

} // namespace speedlab::plugins
