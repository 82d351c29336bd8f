// render_json and render_csv (schema: docs/json.md, docs/slack.md).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "fsimg/slack/report.hpp"

namespace fsimg::slack {

namespace {

nlohmann::json problems(const std::vector<Problem>& list) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& p : list) a.push_back({{"path", p.path}, {"reason", p.reason}});
    return a;
}

std::string lower(Fs fs) {
    std::string s(to_string(fs));
    for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return s;
}

}  // namespace

std::string render_json(const Report& r) {
    using nlohmann::json;
    json j;
    j["schema_version"] = 1;
    j["tree"] = {{"files", r.files},
                 {"directories", r.directories},
                 {"symlinks", r.symlinks},
                 {"skipped_special_files", r.other},
                 {"apparent_bytes", r.apparent_bytes},
                 {"extra_hard_link_names", r.extra_links},
                 {"largest_file_bytes", r.largest_file},
                 {"unreadable_directories", r.unreadable_count},
                 {"unreadable", problems(r.unreadable)}};
    json hist = json::array();
    for (std::size_t k = 0; k < r.histogram.size(); ++k) {
        hist.push_back(
            {{"min_bytes", k == 0 ? 0 : (std::uint64_t{1} << (k - 1))},
             {"max_bytes", k == 0 ? 0 : (k >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << k) - 1)},
             {"files", r.histogram[k].first},
             {"bytes", r.histogram[k].second}});
    }
    j["histogram"] = hist;
    j["volume_bytes"] = r.volume_bytes ? json(*r.volume_bytes) : json(nullptr);
    j["tolerance"] = r.tolerance;
    json fss = json::array();
    for (const auto& s : r.filesystems) {
        fss.push_back({{"filesystem", lower(s.fs)},
                       {"files", s.files},
                       {"directories", s.directories},
                       {"apparent_bytes", s.apparent_bytes},
                       {"resident_files", s.resident_files},
                       {"resident_bytes", s.resident_bytes},
                       {"mft_records", s.records},
                       {"directory_entry_bytes", s.entry_bytes},
                       {"unstorable_files", s.unstorable_files},
                       {"unstorable_bytes", s.unstorable_bytes},
                       {"unstorable_names", s.unstorable_entries},
                       {"unstorable", problems(s.unstorable)},
                       {"skipped_symlinks", s.skipped_symlinks},
                       {"limit_violations", problems(s.limit_violations)}});
    }
    j["filesystems"] = fss;
    json rows = json::array();
    for (const Row& row : r.rows) {
        json o = {{"filesystem", lower(row.fs)},
                  {"cluster_bytes", row.cluster_bytes},
                  {"data_clusters", row.data_clusters},
                  {"metadata_clusters", row.metadata_clusters},
                  {"mft_clusters", row.mft_clusters},
                  {"data_bytes", row.data_bytes},
                  {"slack_bytes", row.slack_bytes},
                  {"slack_percent", row.slack_percent},
                  {"metadata_bytes", row.metadata_bytes},
                  {"total_bytes", row.total_bytes},
                  // null on a row that does not store everything: it is not "as good as the best".
                  {"over_best_bytes", row.complete ? json(row.over_best_bytes) : json(nullptr)},
                  {"unstorable_files", row.unstorable_files},
                  {"unstorable_bytes", row.unstorable_bytes},
                  {"complete", row.complete},
                  {"current", row.current},
                  {"short_bytes", row.short_bytes ? json(*row.short_bytes) : json(nullptr)},
                  {"overhead_bytes", row.overhead_bytes ? json(*row.overhead_bytes) : json(nullptr)},
                  {"free_bytes", row.free_bytes ? json(*row.free_bytes) : json(nullptr)},
                  {"fits", row.fits ? json(*row.fits) : json(nullptr)},
                  {"best", row.best},
                  {"recommended", row.recommended}};
        if (!row.top.empty()) {
            json top = json::array();
            for (const auto& d : row.top) {
                top.push_back({{"path", d.path}, {"slack_bytes", d.slack_bytes}, {"files", d.files}});
            }
            o["top_directories"] = top;
        }
        rows.push_back(o);
    }
    j["rows"] = rows;
    j["recommendation"] = r.recommended
                              ? json({{"row", *r.recommended},
                                      {"best_row", *r.best},
                                      {"filesystem", lower(r.rows[*r.recommended].fs)},
                                      {"cluster_bytes", r.rows[*r.recommended].cluster_bytes},
                                      {"reason", r.reason},
                                      {"freed_bytes", r.freed_bytes ? json(*r.freed_bytes) : json(nullptr)}})
                              : json(nullptr);
    j["no_recommendation_reason"] = r.recommended ? json(nullptr) : json(r.reason);
    j["current"] = r.current ? json({{"row", *r.current},
                                     {"filesystem", lower(r.rows[*r.current].fs)},
                                     {"cluster_bytes", r.rows[*r.current].cluster_bytes}})
                             : json(nullptr);
    json defs = json::array();
    for (const auto& d : r.defaults) {
        defs.push_back({{"tool", d.tool},
                        {"filesystem", lower(d.fs)},
                        {"cluster_bytes", d.cluster_bytes ? json(d.cluster_bytes) : json(nullptr)},
                        {"row", d.row ? json(*d.row) : json(nullptr)},
                        {"total_bytes", d.row ? json(r.rows[*d.row].total_bytes) : json(nullptr)},
                        {"note", d.note}});
    }
    j["defaults"] = defs;
    return j.dump(2) + "\n";
}

std::string render_csv(const Report& r) {
    std::string out =
        "filesystem,cluster_bytes,data_bytes,slack_bytes,slack_percent,metadata_bytes,total_bytes,"
        "over_best_bytes,unstorable_files,overhead_bytes,free_bytes,fits,best,recommended,unstorable_bytes,"
        "complete,current\n";
    for (const Row& row : r.rows) {
        out += fmt::format(
            "{},{},{},{},{:.3f},{},{},{},{},{},{},{},{},{},{},{},{}\n", lower(row.fs), row.cluster_bytes,
            row.data_bytes, row.slack_bytes, row.slack_percent, row.metadata_bytes, row.total_bytes,
            row.complete ? fmt::format("{}", row.over_best_bytes) : std::string(), row.unstorable_files,
            row.overhead_bytes ? fmt::format("{}", *row.overhead_bytes) : "",
            row.free_bytes ? fmt::format("{}", *row.free_bytes) : "",
            row.fits ? (*row.fits ? "yes" : "no") : "", row.best ? 1 : 0, row.recommended ? 1 : 0,
            row.unstorable_bytes, row.complete ? 1 : 0, row.current ? 1 : 0);
    }
    return out;
}

}  // namespace fsimg::slack
