// fmt's implementation, compiled once for the static PIE (FSIMG_STATIC_RUNTIME).
//
// Debian 12 ships libfmt only as a shared library, and the header-only mode
// (FMT_HEADER_ONLY) puts fmt's whole implementation into every translation
// unit that includes <fmt/format.h>: about 3.9 CPU-s in each of 117, most of
// a build's time (issue 43). Without FMT_HEADER_ONLY the headers declare the
// implementation instead; this file defines it: the non-template functions
// of format-inl.h, and the templates the headers leave to the library,
// instantiated for char (the only character type fsimg formats).
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;

template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
template void buffer<char>::append(const char*, const char*);
template void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);

}  // namespace detail
FMT_END_NAMESPACE
