// fmt's compiled part, built once (target speedlab_fmt, cmake/SpeedlabDependencies.cmake).
// Debian's libfmt-dev has only a shared library, which the GPU machine lacks; header-only
// fmt (FMT_HEADER_ONLY) compiled the whole formatting engine into every translation unit
// that includes <fmt/format.h> (about 3.8 s of CPU each at -O3, 60 of them). Here the
// non-template functions of format-inl.h get their one definition, and the templates that
// format.h declares but does not define are instantiated for the types the headers use.
#include <fmt/format.h>

#include <fmt/format-inl.h>

#include <locale>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;

template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>,
                                 locale_ref);

} // namespace detail
FMT_END_NAMESPACE
