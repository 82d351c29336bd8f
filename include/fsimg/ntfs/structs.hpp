// NTFS on-disk records: boot sector, MFT record header with its update
// sequence array (fixups), attribute headers (resident and non-resident),
// runlists (mapping pairs), $STANDARD_INFORMATION, $FILE_NAME, index entries,
// index roots and INDX blocks, and $I30 collation through $UpCase.
//
// NTFS has no public specification. Facts come from docs/formats.md
// §3 (tags [FLATCAP] = Linux-NTFS documentation, [NTFS-3G] = ntfs-3g source,
// [EXP] = experiments with mkntfs 2022.10.3) and were checked against the
// output of mkntfs and against independent readers (check-image).
// Decoding never judges values; builders produce exact bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/core/time.hpp"

namespace fsimg::ntfs {

/// Logical cluster number on the volume and virtual cluster number within an
/// attribute, both from 0 (formats.md §3.6). Kept apart by type.
enum class Lcn : std::uint64_t {};
enum class Vcn : std::uint64_t {};

inline constexpr std::size_t kBootSectorSize = 512;

/// MFT records 0..11 are the named system files ($MFT .. $Extend) and 12..15
/// are reserved for more (formats.md §3.2 [FLATCAP files]): the first record
/// that can be an ordinary file or directory is 16. Listings leave the ones
/// below out, as ntfs-3g does.
inline constexpr std::uint64_t kFirstNonSystemRecord = 16;
/// The first record fsimg's populate gives a user file or directory: 64,
/// where ntfs-3g puts the first user file on a volume mkntfs made (16..23
/// stay free and reserved, 24..26 hold $Extend's children; formats.md §3.2,
/// §5.3 [EXP]).
inline constexpr std::uint64_t kFirstPopulateRecord = 64;
/// The stride of the update sequence array: always 512 bytes, whatever the
/// sector size (ntfs-3g NTFS_BLOCK_SIZE; formats.md §3.4 [NTFS-3G; EXP]).
inline constexpr std::size_t kFixupStride = 512;

namespace off {                                           // [FLATCAP files/boot], formats.md §3.1
inline constexpr std::size_t Jump = 0;                    // 3 bytes EB 52 90
inline constexpr std::size_t OemId = 3;                   // 8 bytes "NTFS    "
inline constexpr std::size_t BytesPerSector = 11;         // u16
inline constexpr std::size_t SectorsPerCluster = 13;      // u8; >= 0xF4: 2^(256 - value)
inline constexpr std::size_t MediaDescriptor = 21;        // u8 0xF8
inline constexpr std::size_t SectorsPerTrack = 24;        // u16
inline constexpr std::size_t NumberOfHeads = 26;          // u16
inline constexpr std::size_t HiddenSectors = 28;          // u32: partition start LBA
inline constexpr std::size_t DriveSignature = 36;         // u32: 0x00800080
inline constexpr std::size_t TotalSectors = 40;           // u64: device sectors - 1
inline constexpr std::size_t MftLcn = 48;                 // u64
inline constexpr std::size_t MftMirrLcn = 56;             // u64
inline constexpr std::size_t ClustersPerMftRecord = 64;   // s8 (+3 pad)
inline constexpr std::size_t ClustersPerIndexBlock = 68;  // s8 (+3 pad)
inline constexpr std::size_t VolumeSerialNumber = 72;     // u64
inline constexpr std::size_t Checksum = 80;               // u32, 0
inline constexpr std::size_t BootCode = 84;               // 426 bytes
inline constexpr std::size_t Signature = 510;             // 55 AA
}  // namespace off
static_assert(off::Signature + 2 == kBootSectorSize);
static_assert(off::BootCode + 426 == off::Signature);

/// The decoded boot sector. Encoded size fields are kept raw; the helpers
/// below convert them.
struct BootSector {
    std::uint16_t bytes_per_sector = 512;
    std::uint8_t sectors_per_cluster_raw = 8;  ///< 1..128, or 0xF4..0xFF = 2^(256 - v)
    std::uint8_t media_descriptor = 0xF8;
    std::uint16_t sectors_per_track = 63;
    std::uint16_t number_of_heads = 255;
    std::uint32_t hidden_sectors = 0;
    std::uint64_t total_sectors = 0;
    std::uint64_t mft_lcn = 0;
    std::uint64_t mftmirr_lcn = 0;
    std::int8_t clusters_per_mft_record = -10;  ///< > 0: clusters; < 0: 2^-v bytes
    std::int8_t clusters_per_index_block = 1;
    std::uint64_t volume_serial_number = 0;
    friend bool operator==(const BootSector&, const BootSector&) = default;
};
BootSector decode_boot_sector(std::span<const std::byte, kBootSectorSize> sector);
/// Writes every field, the OEM ID, a jump and a tiny halt loop as boot code
/// (the volume is not bootable), and the 55 AA signature.
void encode_boot_sector(const BootSector& boot, std::span<std::byte, kBootSectorSize> sector);

/// Sectors-per-cluster byte for a cluster size (formats.md §3.1 [EXP]):
/// the count when <= 128, else 256 - log2(count). nullopt when the cluster is
/// not a power-of-two multiple of the sector or the count is above 2^12.
std::optional<std::uint8_t> encode_sectors_per_cluster(std::uint32_t cluster_bytes,
                                                       std::uint32_t bytes_per_sector) noexcept;
/// Inverse; nullopt for 0, 129..0xF3, and exponents that overflow.
std::optional<std::uint32_t> decode_cluster_bytes(std::uint8_t raw, std::uint32_t bytes_per_sector) noexcept;
/// Clusters-per-record byte (MFT record, index block): size / cluster when
/// size >= cluster, else -log2(size) (0xF6 = 1024 B) [FLATCAP files/boot].
std::int8_t encode_record_size(std::uint32_t record_bytes, std::uint32_t cluster_bytes) noexcept;
std::optional<std::uint32_t> decode_record_size(std::int8_t raw, std::uint32_t cluster_bytes) noexcept;

// ---- fixups (multi-sector protection) [FLATCAP concepts/fixup], formats.md §3.4

/// Protects a multi-sector record before writing: stores `usn` at usa_offset,
/// saves the last two bytes of every 512-byte stride into the array and
/// replaces them with `usn`. record.size() must be a multiple of 512 and the
/// array (2 + 2 * strides bytes) must fit; throws FormatError otherwise.
void apply_fixups(std::span<std::byte> record, std::uint16_t usa_offset, std::uint16_t usn);
/// Checks and undoes fixups after reading: the USA offset and count come from
/// the record header (bytes 4 and 6). Returns nullopt on success (strides
/// restored), or the index of the first stride whose tail does not hold the
/// update sequence number (nothing restored). Throws FormatError when the
/// array itself lies outside the record or its count does not match the size.
std::optional<std::size_t> verify_and_remove_fixups(std::span<std::byte> record);

// ---- runlists [FLATCAP concepts/data_runs], formats.md §3.6

/// One data run: `length` clusters at `lcn`, or a sparse run when lcn is empty.
struct DataRun {
    std::uint64_t length = 0;
    std::optional<std::uint64_t> lcn;
    friend bool operator==(const DataRun&, const DataRun&) = default;
};
/// Mapping pairs: minimal byte counts, signed LCN deltas, 0x00 terminator.
/// Throws Error(usage) for zero-length runs or lengths/LCNs above 2^63.
std::vector<std::byte> encode_runlist(std::span<const DataRun> runs);
/// Decodes until the 0x00 terminator. Throws FormatError for a field past the
/// end, a zero length, a length or offset field wider than 8 bytes, a
/// negative resulting LCN, or more runs than max_runs (bounds the walk).
std::vector<DataRun> decode_runlist(std::span<const std::byte> bytes, std::size_t max_runs = 1u << 20);

// ---- attributes [FLATCAP concepts/attribute_header], formats.md §3.5

enum class AttrType : std::uint32_t {
    standard_information = 0x10,
    attribute_list = 0x20,
    file_name = 0x30,
    object_id = 0x40,
    security_descriptor = 0x50,
    volume_name = 0x60,
    volume_information = 0x70,
    data = 0x80,
    index_root = 0x90,
    index_allocation = 0xA0,
    bitmap = 0xB0,
    reparse_point = 0xC0,
    ea_information = 0xD0,
    ea = 0xE0,
    logged_utility_stream = 0x100,
    end = 0xFFFFFFFF,
};

/// Whether `type` is an attribute type code an NTFS version defines: 0x10
/// to 0x100 in steps of 0x10 (0xF0, $PROPERTY_SET, only NT4 used)
/// [FLATCAP attributes/index; $AttrDef of mkntfs], formats.md §3.5. A
/// record's attributes follow in ascending type order [FLATCAP
/// concepts/file_record].
constexpr bool defined_attribute_type(std::uint32_t type) noexcept {
    return type >= 0x10 && type <= 0x100 && type % 0x10 == 0;
}

/// A file reference: 48-bit MFT record number + 16-bit sequence number.
struct FileReference {
    std::uint64_t record = 0;
    std::uint16_t sequence = 0;
    std::uint64_t packed() const noexcept {
        return (record & 0xFFFFFFFFFFFFull) | (std::uint64_t(sequence) << 48);
    }
    static FileReference unpack(std::uint64_t v) noexcept {
        return {v & 0xFFFFFFFFFFFFull, static_cast<std::uint16_t>(v >> 48)};
    }
    friend bool operator==(const FileReference&, const FileReference&) = default;
};

/// A resident attribute: 24-byte header, name, value at an 8-aligned offset;
/// total length 8-aligned. `indexed` sets the resident flag byte (1 for
/// $FILE_NAME). Instance ids are assigned by MftRecordBuilder.
std::vector<std::byte> build_resident_attribute(AttrType type, std::u16string_view name,
                                                std::span<const std::byte> value, bool indexed = false);
/// Sizes of a non-resident attribute, in bytes.
struct NonResidentSizes {
    std::uint64_t allocated = 0;    ///< a cluster multiple
    std::uint64_t data = 0;         ///< data size (logical length)
    std::uint64_t initialized = 0;  ///< initialized size (<= data)
};
/// A non-resident attribute covering VCN 0 .. last_vcn: 64-byte header, name,
/// runlist at an 8-aligned offset, total length 8-aligned. With
/// `sparse_compressed_size` a sparse attribute: flag 0x8000, compression unit
/// 4 and that compressed size (bytes of the clusters the runlist maps, its
/// holes not counted) at 0x40, a 72-byte header [NTFS-3G attrib.c
/// ntfs_attr_update_meta], formats.md §3.5.
std::vector<std::byte> build_nonresident_attribute(
    AttrType type, std::u16string_view name, std::span<const DataRun> runs, const NonResidentSizes& sizes,
    std::uint64_t last_vcn, std::optional<std::uint64_t> sparse_compressed_size = std::nullopt);

/// FILETIME: 100 ns intervals since 1601-01-01 UTC [FLATCAP glossary]; times
/// before 1601 become 0.
std::uint64_t filetime_from_unix(std::int64_t unix_seconds, std::uint32_t nanoseconds = 0) noexcept;
/// The UTC civil time a FILETIME stands for, to 100 ns (the inverse of
/// filetime_from_unix; every FILETIME in the image is read through it).
core::CivilTime civil_from_filetime(std::uint64_t filetime) noexcept;
/// "2023-11-14 22:13:20.1234567" (UTC, the seven digits of 100 ns).
std::string filetime_text(std::uint64_t filetime);

/// DOS-style file attribute flags ($STANDARD_INFORMATION, $FILE_NAME) [FLATCAP attributes/*].
namespace file_attr {
inline constexpr std::uint32_t read_only = 0x0001;
inline constexpr std::uint32_t hidden = 0x0002;
inline constexpr std::uint32_t system = 0x0004;
inline constexpr std::uint32_t archive = 0x0020;
inline constexpr std::uint32_t normal = 0x0080;
/// FILE_ATTRIBUTE_SPARSE_FILE: set exactly when the unnamed $DATA is flagged
/// sparse (ntfs-3g refuses to open the file otherwise: "corrupt attribute
/// flags", [NTFS-3G attrib.c ntfs_attr_open]), formats.md §3.7.
inline constexpr std::uint32_t sparse_file = 0x0200;
inline constexpr std::uint32_t directory = 0x10000000;   ///< $FILE_NAME only: has $I30
inline constexpr std::uint32_t view_index = 0x20000000;  ///< has another named index
}  // namespace file_attr

/// $STANDARD_INFORMATION, NTFS 3.x form (72 bytes) [FLATCAP attributes/standard_information].
struct StandardInformation {
    std::uint64_t creation_time = 0, modification_time = 0, mft_change_time = 0, access_time = 0;
    std::uint32_t file_attributes = 0;
    std::uint32_t owner_id = 0;
    std::uint32_t security_id = 0;  ///< key into $Secure:$SII
    std::uint64_t quota_charged = 0;
    std::uint64_t usn = 0;
};
inline constexpr std::size_t kStandardInformationSize = 72;
std::array<std::byte, kStandardInformationSize> encode_standard_information(const StandardInformation& si);

/// $FILE_NAME value [FLATCAP attributes/file_name]: 66 + 2 * name length bytes.
enum class Namespace : std::uint8_t { posix = 0, win32 = 1, dos = 2, win32_and_dos = 3 };
struct FileName {
    FileReference parent;
    std::uint64_t creation_time = 0, modification_time = 0, mft_change_time = 0, access_time = 0;
    std::uint64_t allocated_size = 0;
    std::uint64_t data_size = 0;
    std::uint32_t file_attributes = 0;
    std::uint32_t reparse_or_ea = 0;
    Namespace name_space = Namespace::win32_and_dos;
    std::u16string name;  ///< 1..255 UTF-16 units
};
/// Throws Error(usage) for an empty name or one above 255 units.
std::vector<std::byte> encode_file_name(const FileName& fn);

// ---- MFT records [FLATCAP concepts/file_record], formats.md §3.4

namespace record_flag {
inline constexpr std::uint16_t in_use = 0x0001;
inline constexpr std::uint16_t directory = 0x0002;
inline constexpr std::uint16_t in_extend = 0x0004;
inline constexpr std::uint16_t view_index = 0x0008;
}  // namespace record_flag

/// Attribute header flags [FLATCAP concepts/attribute_header], formats.md §3.5.
namespace attr_flag {
inline constexpr std::uint16_t compressed = 0x0001;
inline constexpr std::uint16_t encrypted = 0x4000;
inline constexpr std::uint16_t sparse = 0x8000;
}  // namespace attr_flag

/// First attribute offset of a record: after the 0x30-byte header and the
/// update sequence array (1 + size / 512 entries), 8-aligned. 0x38 for 1 KiB.
std::uint16_t first_attribute_offset(std::uint32_t record_bytes) noexcept;

/// Builds one FILE record. Attributes must be added in the order NTFS keeps
/// them (type code, then name); instance ids are given in that order.
/// finish() writes the end marker, the header, and applies fixups.
class MftRecordBuilder {
public:
    MftRecordBuilder(std::uint32_t record_bytes, std::uint32_t record_number, std::uint16_t sequence,
                     std::uint16_t flags);
    /// Appends an attribute built by build_*_attribute (its instance field is
    /// set here). Throws Error(unsupported) when the record would overflow.
    void add(std::vector<std::byte> attribute);
    void set_link_count(std::uint16_t n) noexcept { link_count_ = n; }
    /// An extension record: the base record's file reference (packed).
    void set_base_record(std::uint64_t packed_reference) noexcept { base_record_ = packed_reference; }
    /// The instance id the next add() gives (the attribute id an
    /// $ATTRIBUTE_LIST entry names).
    std::uint16_t next_instance() const noexcept { return next_instance_; }
    /// The record, fixups applied (update sequence number 1).
    std::vector<std::byte> finish() const;
    /// Bytes in use so far including the 8-byte end marker.
    std::uint32_t bytes_in_use() const noexcept;

private:
    std::uint32_t record_bytes_;
    std::uint32_t record_number_;
    std::uint16_t sequence_;
    std::uint16_t flags_;
    std::uint16_t link_count_ = 0;
    std::uint16_t next_instance_ = 0;
    std::uint64_t base_record_ = 0;
    std::vector<std::byte> attributes_;
};

/// Decoded MFT record header (after fixups).
struct MftRecordHeader {
    std::array<char, 4> magic{};
    std::uint16_t usa_offset = 0, usa_count = 0;
    std::uint64_t lsn = 0;
    std::uint16_t sequence = 0, link_count = 0, first_attribute = 0, flags = 0;
    std::uint32_t bytes_in_use = 0, bytes_allocated = 0;
    std::uint64_t base_record = 0;
    std::uint16_t next_instance = 0;
    std::uint32_t record_number = 0;
};
/// Throws FormatError when the record is shorter than 0x30 bytes.
MftRecordHeader decode_mft_record_header(std::span<const std::byte> record);

// ---- indexes [FLATCAP attributes/index_root, concepts/index_*], formats.md §3.8

namespace collation {
inline constexpr std::uint32_t binary = 0x00;
inline constexpr std::uint32_t file_name = 0x01;
inline constexpr std::uint32_t ulong = 0x10;
inline constexpr std::uint32_t sid = 0x11;
inline constexpr std::uint32_t security_hash = 0x12;
inline constexpr std::uint32_t ulongs = 0x13;
}  // namespace collation

/// The full 65,536-entry up-case table mkntfs writes (and Windows Vista..8
/// accept; formats.md §3.2, §3.11). Index = UTF-16 unit, value = its upper case.
std::span<const std::uint16_t, 65536> upcase_table() noexcept;
/// The CRC-64 that $UpCase:$Info stores for a table: CRC-64 with the
/// reflected polynomial 0x9A6C9329AC4BC9B5 and an all-ones pre- and
/// post-inversion applied to each 16-bit unit in turn (little-endian bytes).
/// For upcase_table() it is 0xDADC7E776B1B690C, the value mkntfs writes and a
/// Windows 10 1709 (build 16299) $Info holds (the upcaseinfo parser's test data).
std::uint64_t upcase_info_crc64(std::span<const std::uint16_t> table) noexcept;
/// FILENAME collation of two names: up-case each unit through the table and
/// compare as unsigned numbers; the shorter name first when one is a prefix
/// (formats.md §3.8 [NTFS-3G unistr.c]). Returns <0, 0, >0.
int collate_file_names(std::u16string_view a, std::u16string_view b) noexcept;

/// `v` rounded up to a multiple of 8: attribute, value and index entry
/// lengths are 8-aligned [FLATCAP concepts/attribute_header] ("r8" in these comments).
constexpr std::uint64_t r8(std::uint64_t v) noexcept { return (v + 7) & ~std::uint64_t{7}; }

/// An $I30 index entry: file reference, length r8(16 + key), key = the
/// $FILE_NAME value.
std::vector<std::byte> build_file_name_index_entry(FileReference ref,
                                                   std::span<const std::byte> file_name_value);
/// A view-index entry ($SDH, $SII, $Q, $O): data offset/length in place of
/// the file reference, key, then data; length r8(16 + key + data). Callers
/// fill any padding after the data ($SDH: "II", as Windows and mkntfs).
std::vector<std::byte> build_view_index_entry(std::span<const std::byte> key,
                                              std::span<const std::byte> data);
/// An index entry (built without a sub-node) given one: 8 more bytes holding
/// the child block's VCN at its end, flag 0x01 [FLATCAP concepts/index_entry].
std::vector<std::byte> index_entry_with_sub_node(std::vector<std::byte> entry, std::uint64_t vcn);
/// The last entry of a node: 16 bytes, or 24 with a child VCN.
std::vector<std::byte> build_end_index_entry(std::optional<std::uint64_t> child_vcn = std::nullopt);

/// $INDEX_ROOT value: indexed attribute type (0x30 for $I30, 0 for view
/// indexes), collation rule, index block size and its clusters-per-block byte,
/// then a node header and the given entries (ending with an end entry).
/// `large` sets the "has sub-nodes" flag (entries live in INDX blocks).
std::vector<std::byte> build_index_root(std::uint32_t indexed_type, std::uint32_t collation_rule,
                                        std::uint32_t index_block_bytes, std::uint32_t cluster_bytes,
                                        std::span<const std::byte> entries, bool large);
/// One INDX block of index_block_bytes: header, node header, entries from
/// 0x40 (for 4 KiB), fixups applied. Throws Error(unsupported) when the
/// entries do not fit.
std::vector<std::byte> build_index_block(std::uint64_t vcn, std::uint32_t index_block_bytes,
                                         std::span<const std::byte> entries);

// ---- decoding attribute values (dump, the reader; issue 8's fsck) ----
// Every decoder reads through bounds checks and throws FormatError (offset
// relative to the value) when a field would leave the value. None judges.

/// The name NTFS documentation uses for an attribute type code
/// ("$STANDARD_INFORMATION", ...); "" for codes not listed in formats.md §3.5.
std::string_view attr_type_name(std::uint32_t type) noexcept;

/// $STANDARD_INFORMATION: 48 bytes (NTFS 1.2: times, attributes, maximum
/// versions, version, class id) or 72 (3.x adds owner id, security id, quota
/// charged, USN) [FLATCAP attributes/standard_information], formats.md §3.7.
/// The 3.x fields stay 0 for the 48-byte form. Throws FormatError below 48 bytes.
StandardInformation decode_standard_information(std::span<const std::byte> value);

/// $FILE_NAME (66 + 2 * name length bytes, formats.md §3.7). Throws
/// FormatError when the value is shorter than 66 bytes or than its name.
FileName decode_file_name(std::span<const std::byte> value);

/// $VOLUME_INFORMATION (12 bytes: 8 zero, major, minor, flags) [FLATCAP], formats.md §3.9.
struct VolumeInformation {
    std::uint8_t major = 0, minor = 0;
    std::uint16_t flags =
        0;  ///< 0x0001 dirty, 0x0002 resize $LogFile, 0x0004 upgrade, 0x0008 mounted on NT4,
            ///< 0x0010 deleting USN, 0x0020 repair object ids, 0x8000 modified by chkdsk
};
/// Throws FormatError below 12 bytes.
VolumeInformation decode_volume_information(std::span<const std::byte> value);

/// A UTF-16LE string of value.size() / 2 units (an odd last byte is ignored):
/// $VOLUME_NAME, attribute names.
std::u16string decode_utf16(std::span<const std::byte> bytes);

/// One index entry [FLATCAP concepts/index_entry], formats.md §3.8. For $I30
/// (indexed type 0x30) the first 8 bytes are a file reference and the key a
/// $FILE_NAME value; for view indexes ($SDH, $SII, $O, $Q, $R) they are the
/// data offset (u16) and length (u16) of a data part inside the entry.
struct IndexEntry {
    std::uint32_t offset = 0;     ///< within the decoded span
    std::uint64_t reference = 0;  ///< raw first 8 bytes
    std::uint16_t length = 0;     ///< entry length
    std::uint16_t key_length = 0;
    std::uint16_t flags = 0;  ///< 0x01 has sub-node, 0x02 last entry
    std::vector<std::byte> key;
    std::optional<FileName> file_name;       ///< decoded key of a non-last $I30 entry
    std::optional<std::uint64_t> child_vcn;  ///< last 8 bytes when flags & 0x01
    bool last() const noexcept { return flags & 0x02; }
};

/// The entries of one index node: from `entries_offset` up to
/// `index_length` bytes into `node` (both relative to the node header at
/// node[0], as stored). Stops after the entry flagged last; at most
/// node.size() / 16 entries. Throws FormatError for an entry length below 16,
/// not 8-aligned, or past index_length; a key past its entry; a missing last
/// entry. `file_names` decodes keys as $FILE_NAME values.
std::vector<IndexEntry> decode_index_entries(std::span<const std::byte> node, bool file_names);

/// $INDEX_ROOT value (formats.md §3.8): 16-byte root header, 16-byte node
/// header, entries.
struct IndexRoot {
    std::uint32_t indexed_type = 0;    ///< 0x30 for $I30, 0 for view indexes
    std::uint32_t collation_rule = 0;  ///< collation:: values
    std::uint32_t index_block_bytes = 0;
    std::uint8_t clusters_per_block = 0;
    std::uint32_t entries_offset = 0;  ///< node header: first entry, from the node header
    std::uint32_t index_length = 0;    ///< node header: bytes in use, from the node header
    std::uint32_t allocated_length = 0;
    std::uint8_t node_flags = 0;  ///< 0x01 large index (entries in INDX blocks)
    std::vector<IndexEntry> entries;
};
/// Throws FormatError when the value is shorter than 32 bytes or an entry is bad.
IndexRoot decode_index_root(std::span<const std::byte> value);

/// One INDX block (formats.md §3.8): "INDX", update sequence array at 0x28,
/// LSN at 8, the block's own VCN at 0x10, node header at 0x18.
struct IndexBlock {
    std::uint64_t lsn = 0;
    std::uint64_t vcn = 0;
    std::uint32_t entries_offset = 0;  ///< from the node header
    std::uint32_t index_length = 0;    ///< bytes in use, from the node header
    std::uint32_t allocated_length = 0;
    std::uint8_t node_flags = 0;  ///< 0x01: entries have sub-nodes
    std::vector<IndexEntry> entries;
};
/// Checks the signature and the update sequence array and removes the
/// fixups in `raw` (a whole block, a multiple of 512 bytes), then decodes the
/// node's entries as decode_index_entries() does. Throws FormatError (offset
/// within the block) for another signature, a malformed array, a stride whose
/// tail does not hold the update sequence number, or a bad entry.
IndexBlock decode_index_block(std::span<std::byte> raw, bool file_names);

/// One $ATTRIBUTE_LIST entry [FLATCAP attributes/attribute_list].
struct AttributeListEntry {
    std::uint32_t type = 0;
    std::uint16_t length = 0;
    std::u16string name;
    std::uint64_t starting_vcn = 0;
    FileReference record;  ///< the MFT record holding this attribute
    std::uint16_t instance = 0;
};
/// Decodes every entry (each at least 26 bytes, 8-aligned length, name
/// inside it); at most value.size() / 24 entries. Throws FormatError.
std::vector<AttributeListEntry> decode_attribute_list(std::span<const std::byte> value);
/// The value of an $ATTRIBUTE_LIST: each entry type (0x00), length
/// r8(26 + 2 * name units) (0x04), name length (0x06), name offset 0x1A
/// (0x07), starting VCN (0x08), the reference of the record holding the
/// attribute (0x10), its instance id (0x18), the name (0x1A), zero padding
/// [FLATCAP attributes/attribute_list]; `length` is ignored. Callers give
/// the entries in the order NTFS keeps them (type, name, starting VCN).
std::vector<std::byte> encode_attribute_list(std::span<const AttributeListEntry> entries);

}  // namespace fsimg::ntfs
