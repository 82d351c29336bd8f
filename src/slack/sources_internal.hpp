// Shared state of an Analysis (slack/sources.hpp), used by the walker, the
// image reader and the listing reader.
#pragma once

#include <mutex>
#include <optional>

#include "fsimg/slack/sources.hpp"

namespace fsimg::slack {

struct Analysis::Impl {
    explicit Impl(SourceOptions o) : opt(std::move(o)), root(opt.analyzer, DirContext{}) {}

    SourceOptions opt;
    Tally tally;          ///< the main thread's tally (root, images, listings)
    DirAccumulator root;  ///< every source's top level
    bool finished = false;
    std::optional<CurrentLayout> image_layout;  ///< of the last image added (Analysis::image_layout)
    std::string image_other;                    ///< its FAT12/16 text
    std::mutex merge_mutex;

    void merge(Tally&& t) {
        std::lock_guard lock(merge_mutex);
        tally.merge(std::move(t), opt.analyzer.max_examples, opt.analyzer.top);
    }
};

}  // namespace fsimg::slack
