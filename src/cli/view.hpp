// The reading commands' side of fs::View: opening with warnings, JSON of an entry's properties.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fsimg/fs/view.hpp"

namespace fsimg::cli {

/// fs::open_view(spec), each of its open_problems() printed as a warning
/// "SPEC: PROBLEM".
std::unique_ptr<fs::View> open_image_view(const std::string& spec);

/// `paths` with the wildcards of each expanded against `view`
/// (fs::expand_wildcards), in order; a path that matches nothing is kept as
/// given, so that the command reports it as it reports a missing file (as a
/// shell without nullglob passes an unmatched pattern on). Problems listing
/// a directory are warnings.
std::vector<std::string> expand_paths(const fs::View& view, const std::vector<std::string>& paths);
/// The same opening SPEC read-only only when a path has a wildcard; the
/// view is closed before returning (the changing commands open the image
/// for writing after).
std::vector<std::string> expand_paths(const std::string& spec, const std::vector<std::string>& paths);

/// An entry's filesystem-specific properties as JSON members.
nlohmann::json properties_json(const fs::Entry& entry);

}  // namespace fsimg::cli
