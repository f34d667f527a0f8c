// fmt's compiled part, built into the program from Debian's libfmt-dev header (format-inl.h is
// the implementation that libfmt.so is compiled from): the program then loads no C++ shared
// library at start (CMakeLists.txt, CMALIGN_STATIC_RUNTIME). What follows instantiates the
// templates that fmt/format.h declares extern or leaves to its library, for the character types
// the library offers; a build against another fmt that needs more fails to link, not to run.
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
// The argument type of vformat_to() changed with fmt 10 (Debian 12 has fmt 9, 13 fmt 10,
// unstable fmt 11); each version's src/format.cc instantiates it so.
#if FMT_VERSION >= 100000
template void vformat_to(buffer<char>&, string_view, typename vformat_args<>::type, locale_ref);
#else
template void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>,
                         locale_ref);
#endif

template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl(locale_ref) -> wchar_t;
template void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);

} // namespace detail
FMT_END_NAMESPACE
