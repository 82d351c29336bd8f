// Read-only view of an NTFS image: the boot sector validated, $MFT located
// through its own runlist, MFT records read with their fixups checked and
// every attribute decoded, non-resident streams read through their runlists.
// The base of dump, and of ls/cat/fsck (issue 8).
//
// The image is hostile (design.md "Untrusted input"): every offset and length
// inside a record is checked against the record before use, runlists are
// decoded only inside their attribute and checked against the volume's
// clusters before any read, every loop is bounded by the bytes it walks, and
// memory is bounded by the record size and by what the caller asks to read,
// never by a size field alone. Damage that stops a read throws
// fsimg::Error(corrupt) naming the MFT record, the attribute and the byte
// offset on the device (the volume).
//
// Facts: docs/formats.md §3.1 (boot sector), §3.4 (FILE record,
// fixups), §3.5 (attribute headers), §3.6 (runlists) [FLATCAP, NTFS-3G, EXP].
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fsimg/io/block_device.hpp"
#include "fsimg/ntfs/structs.hpp"

namespace fsimg::ntfs {

// ---- boot sector

/// A broken boot-sector rule: stable code ("ntfs.boot.cluster_size") and a
/// message naming the values.
struct BootProblem {
    std::string_view code;
    std::string message;
};

/// Checks the boot sector alone (formats.md §3.1): OEM ID "NTFS    ",
/// signature 55 AA, bytes per sector a power of two in 256..4096, a cluster
/// size the sectors-per-cluster byte can encode (at most 2 MiB), MFT record
/// and index block sizes powers of two in 512..65536 (512: the fixup stride;
/// 65536 bounds what one record read allocates), a volume of at least one
/// cluster whose byte size fits 64 bits,
/// $MFT and $MFTMirr LCNs inside it. Returns every broken rule; empty =
/// valid. Never throws (except std::bad_alloc).
std::vector<BootProblem> validate_boot_sector(std::span<const std::byte, kBootSectorSize> sector);

/// Geometry derived from a valid boot sector. Sizes in bytes.
struct Geometry {
    std::uint32_t bytes_per_sector = 0;
    std::uint32_t cluster_bytes = 0;
    std::uint32_t mft_record_bytes = 0;
    std::uint32_t index_block_bytes = 0;
    std::uint64_t total_sectors = 0;  ///< boot sector field (the backup boot sector follows them)
    std::uint64_t cluster_count = 0;  ///< total_sectors / sectors per cluster
    std::uint64_t volume_bytes() const noexcept { return total_sectors * bytes_per_sector; }
};
/// The geometry of a boot sector validate_boot_sector() accepts; nullopt otherwise.
std::optional<Geometry> geometry_of(std::span<const std::byte, kBootSectorSize> sector);

// ---- MFT records (pure: decoded from bytes, no device)

/// One data run placed at its VCN: `length` clusters from `vcn`, at `lcn`,
/// or sparse (no clusters) when lcn is empty.
struct MappedRun {
    Vcn vcn{};
    std::uint64_t length = 0;
    std::optional<Lcn> lcn;
    friend bool operator==(const MappedRun&, const MappedRun&) = default;
};

/// One attribute of an MFT record, decoded (formats.md §3.5).
struct Attribute {
    std::uint64_t record = 0;  ///< MFT record it was read from
    std::uint32_t type = 0;    ///< type code as stored (AttrType values, or any other)
    std::uint32_t offset = 0;  ///< of the header within the record
    std::uint32_t length = 0;  ///< total length, header included
    bool non_resident = false;
    std::u16string name;
    std::uint16_t flags = 0;  ///< 0x0001 compressed, 0x4000 encrypted, 0x8000 sparse
    std::uint16_t instance = 0;

    // Resident (non_resident == false).
    std::uint16_t value_offset = 0;  ///< within the attribute
    bool indexed = false;            ///< resident flag byte 0x16
    std::vector<std::byte> value;    ///< a copy (bounded by the record size)

    // Non-resident.
    Vcn first_vcn{}, last_vcn{};
    std::uint16_t runlist_offset = 0;  ///< within the attribute
    std::uint16_t compression_unit = 0;
    std::uint64_t allocated_size = 0, data_size = 0, initialized_size = 0;
    std::optional<std::uint64_t> compressed_size;  ///< only when compressed or sparse (flags & 0x8001)
    std::vector<MappedRun> runs;                   ///< VCNs from first_vcn

    AttrType kind() const noexcept { return static_cast<AttrType>(type); }
    /// The stream's logical length: the value's for resident, data size otherwise.
    std::uint64_t size() const noexcept { return non_resident ? data_size : value.size(); }
    /// "$DATA", "$DATA:$Bad", "0x1234" for unknown types; names as UTF-8.
    std::string display_name() const;
};

/// A decoded FILE record (formats.md §3.4): header and attributes in
/// on-disk order, up to the 0xFFFFFFFF end marker.
struct MftRecord {
    std::uint64_t number = 0;
    std::uint64_t byte_offset = 0;  ///< offset of the record's first byte on the device (the volume)
    MftRecordHeader header;
    std::uint16_t update_sequence_number = 0;
    std::size_t fixup_strides = 0;  ///< 512-byte strides whose tails matched (all of them)
    std::vector<Attribute> attributes;

    bool in_use() const noexcept { return header.flags & record_flag::in_use; }
    bool is_directory() const noexcept { return header.flags & record_flag::directory; }
    /// The first attribute of this type and name (exact units), or nullptr.
    const Attribute* find(AttrType type, std::u16string_view name = u"") const noexcept;
};

/// Decodes one record read from the image (fixups still applied on disk;
/// they are checked and removed in `raw`). `number` and `byte_offset` only
/// name the record in errors and in the result. Throws Error(corrupt), with
/// the message "MFT record N (volume byte B): ... at record offset X" and B
/// as the byte offset,
/// when: the signature is not "FILE" (also "BAAD"), the update sequence
/// array is malformed or a stride's tail does not hold the update sequence
/// number, the first attribute offset or bytes in use lie outside the record,
/// an attribute header would pass bytes in use, an attribute length is below
/// 24 or not 8-aligned, its name, value or runlist passes its length, or a
/// runlist does not decode (formats.md §3.6) or its VCNs overflow. The walk
/// ends at the end marker or at bytes in use; at most size / 24 attributes.
MftRecord parse_mft_record(std::span<std::byte> raw, std::uint64_t number, std::uint64_t byte_offset = 0);

/// What salvage_mft_record kept of a record whose attributes do not all
/// decode.
struct SalvagedRecord {
    std::vector<std::byte> bytes;  ///< the record, fixups removed, ready for writing
    std::uint32_t dropped = 0;     ///< attributes left out
    bool truncated = false;        ///< an attribute's length was invalid: it and all after it left out
};
/// For fsck -y's repair of a record whose header is sound but whose
/// attributes do not all decode (ntfs.attr.header, ntfs.run.decode,
/// ntfs.record.bytes-in-use): `plain` (one record, fixups removed: the
/// signature "FILE", the update sequence array and the first attribute
/// offset valid as parse_mft_record judges them) walked as parse_mft_record
/// walks it, but over the whole record rather than bytes in use, keeping
/// each attribute that decodes, leaving out one that does not (the walk
/// goes on by its length), and ending at an attribute whose length is below
/// 24, not 8-aligned or passes the record (it and every later one left
/// out), as chkdsk deletes a corrupt attribute record [FLATCAP
/// concepts/file_record: attributes follow each other by their length up
/// to the end marker 0xFFFFFFFF]. The result holds the kept attributes in
/// their order, the end marker, bytes in use where it ends (8-aligned) and
/// zeros after it; every other header byte as it was. nullopt when the
/// header is not sound, when the end marker would not fit, or when the
/// result would not parse.
std::optional<SalvagedRecord> salvage_mft_record(std::span<const std::byte> plain, std::uint64_t number);

/// Calls `visit(number, raw)` for MFT records first .. record_count() - 1 in
/// order, read through $MFT's runlist about 1 MiB at a time (`raw`: the
/// record as stored, fixups in place, which the callee may change). Returns
/// why it stopped early ("MFT records N on: ...", where $MFT's runlist does
/// not map them), nullopt after the last record. Throws Error(io).
class Volume;
std::optional<std::string> scan_records(
    const Volume& v, std::uint64_t first,
    const std::function<void(std::uint64_t, std::span<std::byte>)>& visit);

/// Largest $ATTRIBUTE_LIST read (bytes), of a file or of $MFT itself. A list
/// this long names over 10,000 extents; a longer one is refused rather than
/// allocated (a 1 KiB-record $MFT would map millions of extents).
inline constexpr std::uint64_t kMaxAttributeListBytes = 256 * 1024;

// ---- the volume

/// An opened NTFS volume. Holds a reference to the device (which must
/// outlive it) and $MFT's $DATA attribute; nothing else is cached.
class Volume {
public:
    /// Reads the boot sector and record 0 ($MFT) at the boot sector's MFT LCN
    /// and takes the unnamed $DATA runlist from it; every later record is read
    /// through that runlist. Throws Error(not_this_fs) when byte 3 does not
    /// say "NTFS    ", Error(corrupt) naming the first broken rule of
    /// validate_boot_sector(), when the device is shorter than the boot
    /// sector or record 0, when record 0 does not parse, has no non-resident
    /// unnamed $DATA starting at VCN 0, or its runs leave the volume. When
    /// record 0 has an $ATTRIBUTE_LIST (a fragmented $MFT), the $DATA extents
    /// it names in other records are appended in VCN order; an extent that
    /// does not start where the runs so far end, a record that does not hold
    /// it or a list over 256 KiB is Error(corrupt).
    explicit Volume(const io::BlockDevice& device);

    const io::BlockDevice& device() const noexcept { return device_; }
    const BootSector& boot() const noexcept { return boot_; }
    const Geometry& geometry() const noexcept { return geometry_; }
    /// The boot sector's 512 bytes as read.
    std::span<const std::byte, kBootSectorSize> boot_sector_bytes() const noexcept { return boot_bytes_; }
    /// The backup boot sector (the sector at total_sectors) equals sector 0 in
    /// its first 512 bytes; nullopt when it lies past the device.
    std::optional<bool> backup_boot_matches() const;
    /// $MFT's unnamed $DATA attribute (from record 0, with the runs of its
    /// extents in other records appended).
    const Attribute& mft_data() const noexcept { return mft_data_; }
    /// Reads record 0 again and takes $MFT's $DATA from it, as the
    /// constructor does (for a writer that has just grown $MFT); the
    /// constructor's errors.
    void reload_mft();
    /// Records $MFT holds: its data size / record size.
    std::uint64_t record_count() const noexcept;

    /// Reads and parses MFT record `number` through $MFT's runlist (records
    /// may lie anywhere; a record may span runs). Throws Error(usage) when
    /// number >= record_count(), Error(corrupt) as parse_mft_record() and
    /// read_stream() do.
    MftRecord read_record(std::uint64_t number) const;

    /// The device (volume) offset of byte `stream_offset` of a non-resident
    /// attribute; nullopt when it falls in a sparse run or no run maps it.
    std::optional<std::uint64_t> device_offset(const Attribute& attr, std::uint64_t stream_offset) const;

    /// Reads out.size() bytes of the attribute's stream from
    /// `stream_offset`: a resident value is copied; non-resident bytes come
    /// from the runs, sparse runs and bytes at or past the initialized size
    /// read as zeros. Compressed (flags 0x0001) and encrypted (0x4000)
    /// streams come back as stored: no LZNT1 decompression, no decryption.
    /// Throws Error(usage) when the range passes size(),
    /// Error(corrupt) when a VCN is not mapped by the runs or a run's clusters
    /// pass the volume's last cluster (message names record, attribute, VCN
    /// and LCN), Error(io/corrupt) from the device.
    void read_stream(const Attribute& attr, std::uint64_t stream_offset, std::span<std::byte> out) const;
    /// The whole stream, refusing (Error(usage)) more than max_bytes so that a
    /// size field cannot make the caller allocate.
    std::vector<std::byte> read_stream(const Attribute& attr, std::uint64_t max_bytes) const;

    /// Reads INDX block `block` (0-based; `block_bytes` each, the index
    /// root's block size) of an $INDEX_ALLOCATION attribute and decodes it
    /// (decode_index_block). Throws Error(usage) when block_bytes is not a
    /// power of two in 512..65536 or the block passes the stream, and
    /// Error(corrupt) naming the record, the attribute, the block and the
    /// device offset when it does not decode or cannot be read.
    IndexBlock read_index_block(const Attribute& allocation, std::uint64_t block, std::uint32_t block_bytes,
                                bool file_names) const;

    /// Checks that every non-sparse run lies inside the volume's clusters;
    /// throws Error(corrupt) naming the record, attribute and run otherwise.
    void check_runs(const Attribute& attr) const;

private:
    void load_mft();
    void follow_mft_extents(const Attribute& list);

    const io::BlockDevice& device_;
    BootSector boot_;
    std::array<std::byte, kBootSectorSize> boot_bytes_{};
    Geometry geometry_;
    Attribute mft_data_;
};

/// True when the device's sector 0 says "NTFS    " at byte 3 (a cheap
/// detection for dispatch; the device may still be damaged).
bool is_ntfs(const io::BlockDevice& device);

/// A valid backup boot sector and the byte offset it was found at.
struct BackupBootSector {
    std::array<std::byte, kBootSectorSize> sector{};
    std::uint64_t offset = 0;
};
/// The backup boot sector: the volume's last sector, which is the device's
/// last sector for a whole volume (formats.md §3.1). Tried at the last 512,
/// 1024, 2048 and 4096 bytes; accepted when it keeps every rule of
/// validate_boot_sector and its own total sectors put it there. Reads at
/// most 4 sectors; nullopt when none is found.
std::optional<BackupBootSector> find_backup_boot_sector(const io::BlockDevice& device);

}  // namespace fsimg::ntfs
