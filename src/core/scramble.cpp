#include "fsimg/core/scramble.hpp"

#include <random>

namespace fsimg::core {

namespace {

/// splitmix64: a well-mixed 64-bit step.
std::uint64_t mix(std::uint64_t x) noexcept {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

}  // namespace

std::uint64_t NameScrambler::random_key() {
    std::random_device rd;
    return (std::uint64_t{rd()} << 32) ^ rd();
}

std::u16string NameScrambler::scramble(std::u16string_view name, std::uint64_t salt, unsigned attempt,
                                       bool upper_only) const {
    std::uint64_t state = mix(key_ ^ mix(salt) ^ mix(attempt + 0x1234u));
    for (const char16_t u : name) state = mix(state ^ u);
    const std::size_t dot = name.rfind(u'.');
    const std::size_t stem = dot == std::u16string_view::npos || dot == 0 ? name.size() : dot;
    std::u16string out(name);
    for (std::size_t i = 0; i < stem; ++i) {
        const char16_t u = name[i];
        state = mix(state);
        const auto pick = [&](char16_t base, unsigned n) { return static_cast<char16_t>(base + state % n); };
        if (u >= u'0' && u <= u'9') {
            out[i] = pick(u'0', 10);
        } else if ((u >= u'A' && u <= u'Z') || upper_only) {
            if (u >= 0x80 || (u >= u'A' && u <= u'Z') || (u >= u'a' && u <= u'z')) out[i] = pick(u'A', 26);
        } else if ((u >= u'a' && u <= u'z') || u >= 0x80) {
            out[i] = pick(u'a', 26);
        }
    }
    return out;
}

}  // namespace fsimg::core
