// open_view(): detect, then the adapter's view.
#include "fsimg/fs/view.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "adapters.hpp"
#include "fsimg/core/error.hpp"
#include "fsimg/core/text.hpp"
#include "fsimg/core/utf.hpp"
#include "fsimg/fs/detect.hpp"
#include "fsimg/ntfs/structs.hpp"

namespace fsimg::fs {

namespace {

/// A view that also owns the opened image its device belongs to.
class OwningView final : public View {
public:
    OwningView(std::unique_ptr<io::OpenedVolume> opened)
        : View(detect(opened->device())),
          opened_(std::move(opened)),
          inner_(detail::adapter(kind()).open_view(opened_->device(), detection())) {}
    bool has_short_names() const noexcept override { return inner_->has_short_names(); }
    std::uint32_t cluster_bytes() const noexcept override { return inner_->cluster_bytes(); }
    std::string_view type_name() const noexcept override { return inner_->type_name(); }
    std::vector<std::string> open_problems() const override { return inner_->open_problems(); }
    std::optional<Entry> lookup(std::string_view path) const override { return inner_->lookup(path); }
    std::vector<Entry> list(const Entry& dir, std::vector<std::string>& problems) const override {
        return inner_->list(dir, problems);
    }
    void read(const Entry& file, const std::function<void(std::span<const std::byte>)>& sink) const override {
        inner_->read(file, sink);
    }
    void read_sparse(const Entry& file, const std::function<void(std::span<const std::byte>)>& sink,
                     const std::function<void(std::uint64_t)>& hole) const override {
        inner_->read_sparse(file, sink, hole);
    }
    std::vector<DeletedEntry> list_deleted(const Entry& dir) const override {
        return inner_->list_deleted(dir);
    }
    void read_deleted(const DeletedEntry& file,
                      const std::function<void(std::span<const std::byte>)>& sink) const override {
        inner_->read_deleted(file, sink);
    }
    SalvageReport read_salvaged(const Entry& file,
                                const std::function<void(std::span<const std::byte>)>& sink) const override {
        return inner_->read_salvaged(file, sink);
    }
    std::vector<DeletedEntry> list_deleted_in(const DeletedEntry& dir) const override {
        return inner_->list_deleted_in(dir);
    }

private:
    std::unique_ptr<io::OpenedVolume> opened_;
    std::unique_ptr<View> inner_;
};

}  // namespace

std::vector<DeletedEntry> View::list_deleted(const Entry&) const {
    throw Error(
        ErrorCode::unsupported,
        fmt::format("listing deleted files is not supported on {} yet (FAT and exFAT only)", type_name()));
}
void View::read_deleted(const DeletedEntry&, const std::function<void(std::span<const std::byte>)>&) const {
    throw Error(
        ErrorCode::unsupported,
        fmt::format("reading deleted files is not supported on {} yet (FAT and exFAT only)", type_name()));
}
std::vector<DeletedEntry> View::list_deleted_in(const DeletedEntry&) const { return {}; }

SalvageReport View::read_salvaged(const Entry&,
                                  const std::function<void(std::span<const std::byte>)>&) const {
    throw Error(ErrorCode::unsupported,
                fmt::format("salvaging damaged files is not supported on {}", type_name()));
}

std::unique_ptr<View> open_view(const io::BlockDevice& device) {
    const Detection d = detect(device);
    return detail::adapter(d.kind).open_view(device, d);
}

std::unique_ptr<View> open_view(io::OpenedVolume volume) {
    return std::make_unique<OwningView>(std::make_unique<io::OpenedVolume>(std::move(volume)));
}

std::unique_ptr<View> open_view(std::string_view spec) { return open_view(fs::open_volume(spec)); }

std::string normalize_path(std::string_view p) {
    std::string path = "/";
    for (const char ch : p) {
        if (ch != '/' || path.back() != '/') path.push_back(ch);
    }
    if (path.size() > 1 && path.back() == '/') path.pop_back();
    return path;
}

namespace {

/// `utf8` up-cased through Windows' up-case table (the one NTFS volumes carry,
/// ntfs::upcase_table()), unit by unit; a name that is not UTF-8 has its
/// ASCII letters up-cased and its other bytes kept.
std::string windows_upper(std::string_view utf8) {
    if (!core::is_valid_utf8(utf8)) {
        std::string out(utf8);
        for (char& c : out)
            if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        return out;
    }
    std::u16string units = core::utf8_to_utf16(utf8);
    const auto table = ntfs::upcase_table();
    for (char16_t& u : units) u = static_cast<char16_t>(table[u]);
    return core::utf16_to_utf8_lossy(units);
}

}  // namespace

std::vector<std::string> expand_wildcards(const View& view, std::string_view pattern,
                                          std::vector<std::string>& problems) {
    const std::string norm = normalize_path(pattern);
    if (view.lookup(norm)) return {norm};
    std::vector<std::string> parts;
    for (std::size_t at = 1; at < norm.size();) {
        const std::size_t slash = std::min(norm.find('/', at), norm.size());
        parts.push_back(norm.substr(at, slash - at));
        at = slash + 1;
    }
    const auto join = [](const std::string& base, std::string_view name) {
        return base == "/" ? "/" + std::string(name) : base + "/" + std::string(name);
    };
    std::vector<std::string> current{"/"};
    for (std::size_t i = 0; i < parts.size() && !current.empty(); ++i) {
        const bool last = i + 1 == parts.size();
        std::vector<std::string> next;
        for (const std::string& base : current) {
            if (!core::has_wildcard(parts[i])) {
                const std::string p = join(base, parts[i]);
                const auto e = view.lookup(p);
                if (e && (last || e->is_dir)) next.push_back(p);
                continue;
            }
            const auto dir = view.lookup(base);
            if (!dir || !dir->is_dir) continue;
            std::vector<std::string> found;
            // Case folded as Windows folds names (beyond ASCII: café* finds CAFÉ.TXT).
            const std::string folded = windows_upper(parts[i]);
            const auto matches = [&](std::string_view name) {
                return core::wildcard_match(folded, windows_upper(name), false);
            };
            for (const Entry& e : view.list(*dir, problems)) {
                if (e.is_stream || e.name == "." || e.name == ".." || (!last && !e.is_dir)) continue;
                if (matches(e.name) || (!e.short_name.empty() && matches(e.short_name)))
                    found.push_back(join(base, e.name));
            }
            std::sort(found.begin(), found.end());
            next.insert(next.end(), found.begin(), found.end());
        }
        current = std::move(next);
    }
    return current;
}

}  // namespace fsimg::fs
