// open_view(): detect, then the adapter's view.
#include "fsimg/fs/view.hpp"

#include <fmt/format.h>

#include "adapters.hpp"
#include "fsimg/core/error.hpp"

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

std::unique_ptr<View> open_view(std::string_view spec) { return open_view(io::open_volume(spec)); }

std::string normalize_path(std::string_view p) {
    std::string path = "/";
    for (const char ch : p) {
        if (ch != '/' || path.back() != '/') path.push_back(ch);
    }
    if (path.size() > 1 && path.back() == '/') path.pop_back();
    return path;
}

}  // namespace fsimg::fs
