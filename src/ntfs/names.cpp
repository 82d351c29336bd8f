// plan_directory_names: the namespace and DOS name of every name of one
// NTFS directory. See include/fsimg/ntfs/names.hpp.
#include "fsimg/ntfs/names.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_set>

#include "fsimg/core/utf.hpp"
#include "fsimg/fat/names.hpp"
#include "fsimg/ntfs/index_plan.hpp"
#include "fsimg/ntfs/populate.hpp"

namespace fsimg::ntfs {

namespace {

/// The name up-cased through the $UpCase table format writes: two names
/// with the same key collate equal (collate_file_names).
std::u16string upcase_key(std::u16string_view name) {
    const auto table = upcase_table();
    std::u16string key(name);
    for (char16_t& c : key) c = static_cast<char16_t>(table[c]);
    return key;
}

std::u16string display16(const fat::ShortName& n) { return core::utf8_to_utf16(fat::short_name_dotted(n)); }

}  // namespace

std::vector<NamePlan> plan_directory_names(std::span<const NameRequest> names,
                                           std::span<const std::u16string_view> reserved) {
    std::vector<NamePlan> out(names.size());

    // Names equal but for case: neighbours in collation order.
    std::vector<std::size_t> order(names.size() + reserved.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    auto name_at = [&](std::size_t k) {
        return k < names.size() ? names[k].name : reserved[k - names.size()];
    };
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return name_collates_before(name_at(a), name_at(b)); });
    std::vector<bool> dup(names.size(), false);
    for (std::size_t i = 0; i + 1 < order.size(); ++i) {
        if (collate_file_names(name_at(order[i]), name_at(order[i + 1])) != 0) continue;
        for (const std::size_t k : {order[i], order[i + 1]}) {
            if (k >= names.size()) continue;
            dup[k] = true;
            const std::size_t other = k == order[i] ? order[i + 1] : order[i];
            if (other >= names.size()) out[k].equals_reserved = true;
        }
    }

    // Every 8.3-shaped name holds its upper-case form; every long name its
    // collation key.
    fat::ShortNameAllocator alloc;
    std::unordered_set<std::u16string> keys;
    keys.reserve(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
        const std::u16string_view n = name_at(k);
        if (const auto form = fat::upper_short_form(n)) alloc.reserve(*form);
        keys.insert(upcase_key(n));
    }

    for (std::size_t k = 0; k < names.size(); ++k) {
        const std::u16string_view n = names[k].name;
        NamePlan& p = out[k];
        if (dup[k] || names[k].posix_only || !is_win32_name(n)) {
            p.name_space = Namespace::posix;
            continue;
        }
        if (is_dos_name(n)) {
            p.name_space = Namespace::win32_and_dos;
            continue;
        }
        p.name_space = Namespace::win32;
        // A generated name that collates equal to a long name (possible only
        // through $UpCase mappings of non-ASCII units onto ASCII) is skipped:
        // the allocator hands out the next candidate.
        do {
            p.dos = display16(alloc.generate(n, true));
        } while (keys.count(upcase_key(p.dos)) != 0);
    }
    return out;
}

DirectoryNames::DirectoryNames(std::span<const std::u16string_view> reserved) {
    keys_.reserve(reserved.size());
    for (const std::u16string_view n : reserved) add(n);
}

void DirectoryNames::add(std::u16string_view name) {
    if (const auto form = fat::upper_short_form(name)) alloc_.reserve(*form);
    keys_.insert(upcase_key(name));
    ++held_;
}

NamePlan DirectoryNames::plan(const NameRequest& request) const {
    // As plan_directory_names with one name: the held names and the request
    // itself reserve their upper-case 8.3 forms and collation keys.
    const std::u16string_view n = request.name;
    const std::u16string key = upcase_key(n);
    NamePlan p;
    if (keys_.count(key) != 0) {
        p.equals_reserved = true;
        p.name_space = Namespace::posix;
        return p;
    }
    if (request.posix_only || !is_win32_name(n)) {
        p.name_space = Namespace::posix;
        return p;
    }
    if (is_dos_name(n)) {
        p.name_space = Namespace::win32_and_dos;
        return p;
    }
    p.name_space = Namespace::win32;
    const std::optional<fat::ShortName> own = fat::upper_short_form(n);
    std::unordered_set<std::u16string> skipped;  // candidates that collate equal to a long name
    const auto taken = [&](const fat::ShortName& c) {
        return alloc_.contains(c) || (own && c == *own) || skipped.count(display16(c)) != 0;
    };
    for (;;) {
        p.dos = display16(fat::generate_short_name(n, taken, true));
        const std::u16string k = upcase_key(p.dos);
        if (keys_.count(k) == 0 && k != key) return p;
        skipped.insert(p.dos);
    }
}

}  // namespace fsimg::ntfs
