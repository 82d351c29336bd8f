#include "fsimg/core/progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "fsimg/core/units.hpp"

namespace fsimg::core {

Progress::Progress(Sink sink, std::chrono::milliseconds interval)
    : sink_(std::move(sink)), interval_(interval) {}

void Progress::begin(std::string phase, std::uint64_t total, ProgressUnit unit) {
    end();
    state_ = ProgressState{};
    state_.phase = std::move(phase);
    state_.total = total;
    state_.unit = unit;
    running_ = true;
    start_ = std::chrono::steady_clock::now();
    calls_since_check_ = 0;
    units_since_check_ = 0;
    send(false);
}

void Progress::advance(std::uint64_t n) {
    if (!running_) return;
    state_.done += n;
    units_since_check_ += n;
    const std::uint64_t heavy = state_.unit == ProgressUnit::bytes ? (1u << 20) : 1024;
    if (++calls_since_check_ < 64 && units_since_check_ < heavy) return;
    calls_since_check_ = 0;
    units_since_check_ = 0;
    if (std::chrono::steady_clock::now() - last_sent_ >= interval_) send(false);
}

void Progress::end() {
    if (!running_) return;
    send(true);
    running_ = false;
}

void Progress::send(bool finished) {
    const auto now = std::chrono::steady_clock::now();
    last_sent_ = now;
    state_.elapsed_seconds = std::chrono::duration<double>(now - start_).count();
    state_.finished = finished;
    if (sink_) sink_(state_);
}

namespace {

std::string amount(std::uint64_t n, ProgressUnit unit) {
    return unit == ProgressUnit::bytes ? format_size(n) : format_count(n);
}

std::string rate_text(double per_second, ProgressUnit unit) {
    const auto r = static_cast<std::uint64_t>(std::llround(per_second));
    return unit == ProgressUnit::bytes ? format_size(r) + "/s" : format_count(r) + " items/s";
}

std::string clock_text(double seconds) {
    const auto s = static_cast<std::uint64_t>(std::llround(std::max(0.0, seconds)));
    if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
    return fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

std::string render_progress_line(const ProgressState& s, unsigned width) {
    const bool known = s.total > 0;
    const double rate = s.elapsed_seconds >= 0.2 ? static_cast<double>(s.done) / s.elapsed_seconds : 0;
    std::string tail;  // everything after the bar
    if (known) {
        const std::uint64_t shown = std::min(s.done, s.total);
        const auto percent =
            static_cast<unsigned>(static_cast<double>(shown) * 100 / static_cast<double>(s.total));
        tail = fmt::format("{:3}%  {} / {}", percent, amount(shown, s.unit), amount(s.total, s.unit));
    } else {
        tail = s.unit == ProgressUnit::bytes ? amount(s.done, s.unit) : amount(s.done, s.unit) + " items";
    }
    if (rate > 0) tail += "  " + rate_text(rate, s.unit);
    if (s.finished) {
        tail += "  " + clock_text(s.elapsed_seconds);
    } else if (known && rate > 0 && s.done < s.total) {
        tail += "  ETA " + clock_text(static_cast<double>(s.total - s.done) / rate);
    }
    std::string phase = s.phase;
    // "phase [bar] tail": the bar takes what is left, 10..30 columns; without a total there is none.
    const std::size_t fixed = phase.size() + 1 + tail.size();
    std::string bar;
    if (known && fixed + 2 + 10 + 1 <= width) {
        const std::size_t inner = std::min<std::size_t>(30, width - fixed - 3);
        const std::uint64_t shown = std::min(s.done, s.total);
        const auto filled =
            static_cast<std::size_t>(static_cast<double>(shown) * inner / static_cast<double>(s.total));
        bar = "[" + std::string(filled, '#') + std::string(inner - filled, '.') + "] ";
    }
    std::string line = phase + (bar.empty() ? "  " : " ") + bar + tail;
    if (line.size() > width) {  // cut the phase text first, then the end
        const std::size_t over = line.size() - width;
        if (over < phase.size()) {
            line = phase.substr(0, phase.size() - over) + (bar.empty() ? "  " : " ") + bar + tail;
        }
        if (line.size() > width) line.resize(width);
    }
    return line;
}

}  // namespace fsimg::core
