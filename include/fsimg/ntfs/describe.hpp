// NTFS structures decoded for display (fsimg dump): the boot sector's
// fields, the flag sets of attributes, records and $Volume, and the INDX
// blocks of an index as they lie in $INDEX_ALLOCATION. Nothing here prints;
// src/cli formats what these return. Format facts: docs/formats.md §3.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/ntfs/structs.hpp"

namespace fsimg::ntfs {

class Volume;
struct Attribute;

/// One field of the NTFS boot sector (formats.md §3.1, the BPB and the NTFS
/// extended BPB as ntfs-3g's layout.h names them).
struct BootField {
    enum class Kind : std::uint8_t {
        number,     ///< an unsigned little-endian integer of `width` bytes
        size_code,  ///< ClustersPer*: a positive cluster count, or -n for 2^n bytes
        hex,        ///< a number best shown in hex (media, signature words, serial, checksum)
        text,       ///< OemId: 8 bytes shown as a string
        signature,  ///< the 55 AA end-of-sector mark, shown byte by byte
    };
    std::string_view name;   ///< "BytesPerSector"
    std::size_t offset = 0;  ///< byte offset in the boot sector
    std::size_t width = 0;   ///< bytes
    Kind kind = Kind::number;
    std::uint64_t number = 0;  ///< the little-endian value (any kind but text)
    std::string text;          ///< the OemId string (text only; bytes as stored, unescaped)
    /// The size code as a signed byte (size_code only).
    std::int8_t size_code() const noexcept { return static_cast<std::int8_t>(number); }
};
/// Every field of the boot sector in on-disk order (the jump, boot code and
/// unused bytes left out). Never throws: a damaged sector gives its bytes.
std::vector<BootField> boot_fields(std::span<const std::byte, kBootSectorSize> sector);

/// "Win32", "DOS", "Win32&DOS" or "POSIX" (formats.md §3.6).
std::string_view namespace_name(Namespace n) noexcept;
/// The set bits of a FILE_ATTRIBUTE_* word ($STANDARD_INFORMATION and
/// $FILE_NAME), comma-separated ("read-only, hidden"); unknown bits as hex,
/// "none" when zero (formats.md §3.5).
std::string file_attribute_names(std::uint32_t attributes);
/// The set bits of an attribute header's flags ("compressed, sparse";
/// formats.md §3.5).
std::string attribute_flag_names(std::uint16_t flags);
/// The set bits of an MFT record header's flags ("in use, directory").
std::string record_flag_names(std::uint16_t flags);
/// The set bits of $VOLUME_INFORMATION's flags ("dirty, modified by chkdsk").
std::string volume_flag_names(std::uint16_t flags);

/// How an index's keys are decoded: $FILE_NAMEs (type 0x30 indexes such as
/// $I30), the 12-byte keys of $Extend/$Reparse:$R (le32 reparse tag, le64
/// file reference [NTFS-3G layout.h REPARSE_INDEX_KEY]), or raw bytes.
enum class IndexKeys : std::uint8_t { file_name, reparse, raw };
/// The key kind of index `name` whose $INDEX_ROOT says `indexed_type`.
IndexKeys index_keys(std::u16string_view name, std::uint32_t indexed_type) noexcept;

/// One INDX block of an $INDEX_ALLOCATION that its $BITMAP marks in use.
struct IndexBlockSlot {
    std::uint64_t block = 0;            ///< block number: byte offset / block_bytes
    std::uint64_t vcn = 0;              ///< the VCN it lies at (block * VCNs per block)
    std::optional<IndexBlock> decoded;  ///< the block, when it decodes
    std::string error;                  ///< why it does not (empty when it does)
};
/// The in-use INDX blocks of one index, as the allocation holds them (not as
/// the B+ tree reaches them: ntfs/directory.hpp walks the tree).
struct IndexBlocks {
    std::uint32_t block_bytes = 0;  ///< the size the blocks were read with
    std::uint64_t blocks = 0;       ///< whole blocks in the allocation's data size
    /// The bitmap was missing or unreadable (`bitmap_error` says which): then
    /// every block is taken as in use, so that a dump still shows them.
    std::optional<std::string> bitmap_error;
    std::vector<std::uint64_t> in_use;  ///< in-use block numbers, at most `max_blocks`
    std::vector<IndexBlockSlot> slots;  ///< the same blocks, read and decoded
};
/// Reads the blocks of `allocation` (an $INDEX_ALLOCATION) that `bitmap`
/// (its $BITMAP of the same name, or nullptr) marks in use, the first
/// `max_blocks` of them, each of `block_bytes` (from $INDEX_ROOT; a value
/// that is not a power of two in 512..65536 gives no blocks); keys decoded
/// as `keys` says. Damage in one block is that slot's `error`; an I/O error
/// throws Error(io). Memory: the bitmap (at most kMaxIndexBitmapBytes) and
/// `max_blocks` decoded blocks.
IndexBlocks read_index_blocks(const Volume& volume, const Attribute& allocation, const Attribute* bitmap,
                              std::uint32_t block_bytes, IndexKeys keys, std::uint64_t max_blocks);

}  // namespace fsimg::ntfs
