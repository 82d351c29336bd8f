// What Windows accepts in a file name, for every filesystem that stores
// Windows names (FAT long names, exFAT, NTFS's Win32 namespace).
//
// Facts: Microsoft, "Naming Files, Paths, and Namespaces" (reserved
// characters and device names); the same character set is FATGEN's for long
// names, the exFAT spec's for File Name entries (§7.7.3) and the Win32
// namespace's (docs/formats.md §1.11, §2.7, §3.7).
#pragma once

#include <string_view>

namespace fsimg::core {

/// The characters no Windows name may hold: U+0000..U+001F and
/// " * / : < > ? \ |, as one string (for messages and tables).
inline constexpr std::u16string_view kWindowsForbiddenPrintable = u"\"*/:<>?\\|";

/// True for a UTF-16 unit Windows forbids in a name: a control character
/// (below U+0020) or one of kWindowsForbiddenPrintable.
constexpr bool is_windows_forbidden(char16_t c) noexcept {
    return c < 0x20 || kWindowsForbiddenPrintable.find(c) != std::u16string_view::npos;
}

/// True for CON, PRN, AUX, NUL, COM1-9, LPT1-9 with or without an extension,
/// in any case, with trailing spaces before the extension: names Windows
/// programs open as devices, not files.
bool is_windows_device_name(std::u16string_view name) noexcept;

}  // namespace fsimg::core
