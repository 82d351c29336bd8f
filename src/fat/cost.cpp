#include "fsimg/fat/cost.hpp"

#include "fsimg/fat/names.hpp"

namespace fsimg::fat {

std::uint32_t name_entry_count(std::u16string_view name) {
    return 1 + (plain_short_name(name) ? 0 : lfn_entry_count(name.size()));
}

}  // namespace fsimg::fat
