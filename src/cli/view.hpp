// The reading commands' side of fs::View: opening with warnings, JSON of an entry's properties.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "fsimg/fs/view.hpp"

namespace fsimg::cli {

/// fs::open_view(spec), each of its open_problems() printed as a warning
/// "SPEC: PROBLEM".
std::unique_ptr<fs::View> open_image_view(const std::string& spec);

/// An entry's filesystem-specific properties as JSON members.
nlohmann::json properties_json(const fs::Entry& entry);

}  // namespace fsimg::cli
