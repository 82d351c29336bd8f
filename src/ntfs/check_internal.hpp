// Shared state of the NTFS checker passes (private to src/ntfs/check_*.cpp).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fsimg/check/cluster_bitmap.hpp"
#include "fsimg/check/finding.hpp"
#include "fsimg/ntfs/check.hpp"
#include "fsimg/ntfs/volume.hpp"

namespace fsimg::ntfs::detail {

inline constexpr std::size_t kMaxCrossLinks = 20;           ///< cross-links reported one by one
inline constexpr std::size_t kFirstLocations = 5;           ///< locations listed in an aggregated finding
inline constexpr std::size_t kMaxPerCode = 50;              ///< findings of one code reported one by one
inline constexpr std::uint64_t kMaxListBytes = 256 * 1024;  ///< $ATTRIBUTE_LIST values read whole
inline constexpr std::uint64_t kRootRecord = 5;
inline constexpr std::uint64_t kFirstUnreservedRecord = 16;  ///< records 0..15 are reserved for system files

/// Per-record state (40 bytes), filled by the records pass and used by the later ones.
namespace rs {
inline constexpr std::uint8_t used = 0x01;           ///< FILE record flagged in use, header sane, parsed
inline constexpr std::uint8_t dir = 0x02;            ///< record flag "directory"
inline constexpr std::uint8_t extension = 0x04;      ///< base reference is not 0
inline constexpr std::uint8_t broken = 0x08;         ///< header or attributes do not parse (reported)
inline constexpr std::uint8_t reached = 0x10;        ///< reached from the root through index entries
inline constexpr std::uint8_t listed = 0x20;         ///< an extension named by its base's $ATTRIBUTE_LIST
inline constexpr std::uint8_t has_list = 0x40;       ///< has an $ATTRIBUTE_LIST
inline constexpr std::uint8_t has_i30 = 0x80;        ///< has an $INDEX_ROOT named $I30
inline constexpr std::uint16_t has_data = 0x100;     ///< data_size/alloc_size are set
inline constexpr std::uint16_t base_ok = 0x200;      ///< an extension whose base reference holds (names pass)
inline constexpr std::uint16_t has_reparse = 0x400;  ///< has a $REPARSE_POINT
inline constexpr std::uint16_t list_bad = 0x800;     ///< its $ATTRIBUTE_LIST does not decode (reported)
}  // namespace rs
struct RecordState {
    std::uint64_t base = 0;  ///< base record number (extensions)
    /// The unnamed $DATA's data size (index entries must agree) and
    /// allocated size (the compressed size for compressed streams, the value
    /// rounded to 8 bytes for resident ones; for messages).
    std::uint64_t data_size = 0, alloc_size = 0;
    std::uint32_t name_hash = 0, entry_hash = 0;  ///< XOR of $FILE_NAME / index entry key hashes
    std::uint16_t sequence = 0, link_count = 0;
    std::uint16_t names = 0;  ///< $FILE_NAMEs outside the DOS namespace (base and extensions)
    std::uint16_t all_names = 0, entries = 0;  ///< all $FILE_NAMEs / index entries naming the record
    std::uint16_t flags = 0;
};

/// The flags of an attribute's first piece (starting VCN 0), looked up
/// for a later piece in another record: the last answer kept, as the
/// pieces of one attribute come one after another.
struct FirstPieceFlags {
    std::uint64_t owner = ~std::uint64_t(0);
    std::uint32_t type = 0;
    std::u16string name;
    std::optional<std::uint16_t> flags;
};

struct CrossLink {
    std::uint64_t cluster = 0;
    std::uint64_t second = 0;  ///< the record that found the cluster already claimed
    std::string second_attr;
};

/// A view of the device whose sector 0 reads as the backup boot sector
/// (when the main one is broken). Read-only.
class BootOverlay final : public io::BlockDevice {
public:
    BootOverlay(const io::BlockDevice& d, std::span<const std::byte, kBootSectorSize> boot) : d_(d) {
        std::copy(boot.begin(), boot.end(), boot_.begin());
    }
    std::uint64_t size() const override { return d_.size(); }
    void read_at(std::uint64_t offset, std::span<std::byte> out) const override;
    void write_at(std::uint64_t offset, std::span<const std::byte> in) override;

private:
    const io::BlockDevice& d_;
    std::array<std::byte, kBootSectorSize> boot_{};
};

struct Context {
    const io::BlockDevice& device;
    check::Findings& out;
    const CheckOptions& options;
    CheckSummary summary;
    std::unique_ptr<BootOverlay> overlay;
    std::unique_ptr<Volume> vol;
    Geometry g;
    std::uint64_t records = 0;  ///< records checked (bounded by $MFT's mapped clusters)

    check::ClusterBitmap mft_bitmap;  ///< one bit per record; size 0 when unusable
    bool have_mft_bitmap = false;
    std::optional<Attribute> mft_bitmap_attr;  ///< $MFT's $BITMAP, when have_mft_bitmap
    std::vector<RecordState> rec;
    /// Clusters whose ownership is tracked: the volume's, but no more than the
    /// image holds (a boot sector claiming 2^40 clusters on a 2 MiB image
    /// must not make the checker allocate 128 GiB; fuzz finding). Clusters
    /// past the image hold no data to own: ntfs.boot.image-truncated says so.
    std::uint64_t tracked_clusters = 0;
    check::ClusterBitmap owned;  ///< one bit per tracked cluster
    bool walk_complete = true;   ///< every in-use record parsed (else "lost" clusters are not judged)
    std::vector<CrossLink> cross_links;
    FirstPieceFlags first_piece;  ///< cache of first_piece_flags()
    std::uint64_t cross_link_count = 0;
    std::vector<std::uint16_t> upcase;  ///< the volume's $UpCase (65536 units) when sane, else empty
    std::map<std::string_view, std::uint64_t> per_code;  ///< findings added through report()

    Context(const io::BlockDevice& d, check::Findings& f, const CheckOptions& o)
        : device(d), out(f), options(o) {}
    const io::BlockDevice& dev() const { return overlay ? *overlay : device; }
    bool used(std::uint64_t n) const { return n < rec.size() && (rec[n].flags & rs::used); }
};

/// Counts instances of one problem, keeping the first kFirstLocations (for first_list).
struct Tally {
    std::uint64_t n = 0;
    std::vector<std::uint64_t> first;
    void add(std::uint64_t v) {
        if (n++ < kFirstLocations) first.push_back(v);
    }
};

/// Adds a finding, the first kMaxPerCode of each code one by one; the rest
/// are counted and summed up by report_suppressed().
void report(Context& c, std::string_view code, check::Location where, std::string message);
void report_suppressed(Context& c);
/// "MFT record 7 ($Boot)": the system file's name for records 0..11.
std::string record_name(std::uint64_t n);
/// A location at MFT record n (its volume byte offset when $MFT maps it).
check::Location at_record(const Context& c, std::uint64_t n, std::string detail = {});
/// "2, 3, 7, ..." (the first kFirstLocations of `v`, "..." when `total` is more).
std::string first_list(const std::vector<std::uint64_t>& v, std::uint64_t total);
/// Reads record n's raw bytes (fixups still applied) through $MFT's runlist;
/// false when the runlist does not map them or they pass the volume.
bool read_raw_record(const Context& c, std::uint64_t n, std::span<std::byte> out);
/// Calls fn(byte offset, bytes) over the first `bytes` of attribute `a`'s
/// stream, 64 KiB at a time (a bitmap of a large volume is never held
/// whole). Throws as Volume::read_stream.
template <class F>
void for_each_chunk(const Context& c, const Attribute& a, std::uint64_t bytes, F&& fn) {
    constexpr std::uint64_t kChunkBytes = 65536;
    std::vector<std::byte> buf;
    for (std::uint64_t at = 0; at < bytes; at += kChunkBytes) {
        buf.resize(static_cast<std::size_t>(std::min(kChunkBytes, bytes - at)));
        c.vol->read_stream(a, at, buf);
        fn(at, std::span<const std::byte>(buf));
    }
}
/// Reads and parses record n; nullopt when it cannot be read or parsed
/// (the records pass reported why).
std::optional<MftRecord> load_record(const Context& c, std::uint64_t n);
/// FNV-1a of a $FILE_NAME's identity: parent record and sequence, namespace, name, directory bit.
std::uint32_t name_key_hash(const FileName& fn);
/// FILENAME collation through the volume's $UpCase (or the built-in table),
/// ties broken by the units themselves (formats.md §3.8 [NTFS-3G unistr.c]).
int collate(const Context& c, std::u16string_view a, std::u16string_view b);

/// The backup boot sector and its byte offset, when the image's last
/// sectors hold a valid one placed where its own total sectors put it.
std::optional<std::pair<std::array<std::byte, kBootSectorSize>, std::uint64_t>> find_backup(
    const io::BlockDevice& d);
/// Pass 1. Returns false when nothing more can be checked (c.vol not set).
bool check_boot(Context& c);
/// $MFTMirr against the first records of $MFT (after the records pass opened $MFT).
void check_mirror(Context& c);
/// Pass 2: record headers, attributes, runlists, cluster claims, $MFT bitmap.
void check_records(Context& c);
/// Pass 3: $FILE_NAME, $STANDARD_INFORMATION, $ATTRIBUTE_LIST.
void check_names(Context& c);
/// Pass 4: $I30 indexes, reachability, link counts.
void check_index(Context& c);
/// Pass 5: $Bitmap, $Volume, $UpCase.
void check_upcase(Context& c);
void check_system(Context& c);
/// Pass 6: $Extend/$Reparse:$R against the records' reparse points.
void check_reparse(Context& c);

}  // namespace fsimg::ntfs::detail
