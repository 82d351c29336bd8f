// Made-up names for a shared metadata image (fsimg dump --metadata-image
// --scramble-names): each name replaced by one of the same length and
// extension, so that the directory structure, the name lengths (and thus
// the entry counts) and the file types stay while the names do not leak
// (e2image -s does the same for ext4).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fsimg::core {

/// Deterministic for its key: a fresh random key per run (random_key()) makes
/// the made-up names unrelated to the real ones, and unguessable from them.
class NameScrambler {
public:
    explicit NameScrambler(std::uint64_t key) noexcept : key_(key) {}
    /// A key from the system's random source (std::random_device).
    static std::uint64_t random_key();
    /// `name` (UTF-16 units) with every unit before the extension (from the
    /// last '.' that is not the first unit on) replaced: an ASCII upper-case
    /// letter by an upper-case letter, any other letter or non-ASCII unit by
    /// a lower-case letter (so that a surrogate pair becomes two letters:
    /// the length in units stays), a digit by a digit; spaces, dots and
    /// other ASCII punctuation kept. `upper_only` makes every letter upper
    /// case (FAT short names). Different `salt` or `attempt` give different
    /// names (callers retry on a collision).
    std::u16string scramble(std::u16string_view name, std::uint64_t salt, unsigned attempt,
                            bool upper_only = false) const;

private:
    std::uint64_t key_;
};

}  // namespace fsimg::core
