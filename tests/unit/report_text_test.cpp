// Escaping and number formatting shared by the reporters.
#include "speedlab_catch.hpp"

#include "reports/common/text.hpp"
#include "reports/common/trace_util.hpp"

using namespace speedlab::reports;

TEST_CASE("html_escape neutralises markup, quotes and control characters", "[report][text]") {
  CHECK(html_escape("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;");
  CHECK(html_escape("a & b \"c\" 'd'") == "a &amp; b &quot;c&quot; &#39;d&#39;");
  CHECK(html_escape("tab\tnl\n") == "tab\tnl\n");
  CHECK(html_escape(std::string("x\x01y")) == "x\xEF\xBF\xBDy");
  CHECK(html_escape("void k<float>(float*)") == "void k&lt;float&gt;(float*)");
}

TEST_CASE("md_code keeps identifiers literal, also inside tables", "[report][text]") {
  CHECK(md_code("vector_add") == "`vector_add`");
  CHECK(md_code("a|b") == "`a\\|b`");
  CHECK(md_code("x`y") == "`` x`y ``");
  CHECK(md_code("") == "` `");
  CHECK(md_code("line1\nline2") == "`line1 line2`");
}

TEST_CASE("md_text escapes inline markup and HTML", "[report][text]") {
  CHECK(md_text("<b>*bold*</b> | x") == "&lt;b&gt;\\*bold\\*&lt;/b&gt; \\| x");
  CHECK(md_text("a\nb") == "a b");
}

TEST_CASE("csv_field quotes per RFC 4180", "[report][text]") {
  CHECK(csv_field("plain") == "plain");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\r\nlines") == "\"two\r\nlines\"");
}

TEST_CASE("numbers are formatted with significant digits and units", "[report][text]") {
  CHECK(fmt_sig(1234.6) == "1235");
  CHECK(fmt_sig(12.345) == "12.3");
  CHECK(fmt_sig(0.000123456) == "0.000123");
  CHECK(fmt_sig(0) == "0");
  CHECK(fmt_sig(-2.5) == "-2.50");
  CHECK(fmt_sig(1.0 / 0.0) == "n/a");
  CHECK(fmt_duration(850) == "850 ns");
  CHECK(fmt_duration(12345) == "12.3 µs");
  CHECK(fmt_duration(4.56e6) == "4.56 ms");
  CHECK(fmt_duration(2.1e9) == "2.10 s");
  CHECK(fmt_bytes(512) == "512 B");
  CHECK(fmt_bytes(4096) == "4.00 KiB");
  CHECK(fmt_bytes(256.0 * 1024 * 1024) == "256 MiB");
  CHECK(fmt_percent(12.34) == "12.3%");
  CHECK(fmt_exact(16777216) == "16777216");
  CHECK(fmt_exact(0.1) == "0.1");
}

TEST_CASE("trace names follow Kineto and Nsight conventions", "[report][text]") {
  speedlab::trace::memcpy_record m;
  m.copy_kind = 1;
  m.src_kind = 1;
  m.dst_kind = 3;
  CHECK(memcpy_event_name(m) == "Memcpy HtoD (Pageable -> Device)");
  // CUPTI memory kinds are one higher than Nsight's; CUPTI's unknown (0) is Nsight's 7.
  CHECK(nsys_memory_kind(1) == 0);
  CHECK(nsys_memory_kind(2) == 1);
  CHECK(nsys_memory_kind(3) == 2);
  CHECK(nsys_memory_kind(0) == 7);
  CHECK(kernel_short_name("void ns::vector_add<float>(float const*, float*, int)") == "vector_add");
  CHECK(kernel_short_name("histogram_atomic<10>(float const*, unsigned int*)") == "histogram_atomic");
  CHECK(kernel_short_name("plain") == "plain");
}
