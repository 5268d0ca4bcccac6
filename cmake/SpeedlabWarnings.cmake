# One INTERFACE target carries the warnings; nvcc gets them through -Xcompiler.
add_library(speedlab_warnings INTERFACE)
set(_speedlab_cxx_warnings -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
target_compile_options(speedlab_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:${_speedlab_cxx_warnings}>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
if(SPEEDLAB_ENABLE_SANITIZERS)
  target_compile_options(speedlab_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer>)
  target_link_options(speedlab_warnings INTERFACE -fsanitize=address,undefined)
endif()
