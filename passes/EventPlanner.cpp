#include "passes/EventPlanner.h"

#include <algorithm>
#include <map>

namespace sdfc {

namespace {

/// Makes `b` join `streams` (none of them 0) into stream 0 at its end: each records an event that
/// stream 0 waits for. A stream keeps the event id an earlier round of the fixpoint gave it.
void set_joins(Block& b, const std::set<int>& streams, int& next_event) {
  std::map<int, int> old(b.join_events.begin(), b.join_events.end());
  b.join_events.clear();
  for (int s : streams) b.join_events.emplace_back(s, old.count(s) ? old[s] : next_event++);
}

}  // namespace

EventPlanner::EventPlanner(int streams, int& next_event)
    : next_event_(next_event),
      clock_(static_cast<std::size_t>(streams), std::vector<int>(static_cast<std::size_t>(streams), 0)) {}

void EventPlanner::begin_state() {
  fork_clock_ = clock_[0];
  state_forks_.clear();
}

std::vector<int> EventPlanner::order(int stream, const std::vector<Touch>& touches, int* record) {
  auto S = static_cast<std::size_t>(stream);
  used_.insert(stream);
  if (stream != 0 && forked_.insert(stream).second) {  // the fork: stream 0's work before this state
    state_forks_.insert(stream);
    learn(S, fork_clock_);
  }
  std::set<int> deps;
  for (std::size_t q = 0; q < ops_.size(); ++q)
    for (const Touch& a : ops_[q].touches)
      for (const Touch& b : touches)
        if (conflict(a, b)) deps.insert(static_cast<int>(q));
  std::vector<int> waits;
  // Latest first: waiting for it often makes the earlier ones known too.
  for (auto it = deps.rbegin(); it != deps.rend(); ++it) {
    Op& q = ops_[static_cast<std::size_t>(*it)];
    auto T = static_cast<std::size_t>(q.stream);
    if (q.stream == stream || clock_[S][T] >= q.seq) continue;
    if (*q.record < 0) *q.record = next_event_++;
    waits.push_back(*q.record);
    // An operation of a branch may not have run: its event's latest record is then older work,
    // and waiting for it tells nothing about the operations it knew.
    if (!q.in_branch) learn(S, q.clock);
  }
  // Two planned iterations of a loop give an operation two entries with one event.
  std::sort(waits.begin(), waits.end());
  waits.erase(std::unique(waits.begin(), waits.end()), waits.end());
  int seq = ++clock_[S][S];
  ops_.push_back(Op{stream, seq, clock_[S], record, touches, false});
  return waits;
}

EventPlanner EventPlanner::branch(const std::vector<EventPlanner>& earlier) const {
  EventPlanner b = *this;
  for (const EventPlanner& e : earlier)
    for (std::size_t s = 0; s < clock_.size(); ++s) b.clock_[s][s] = std::max(b.clock_[s][s], e.clock_[s][s]);
  return b;
}

void EventPlanner::merge(const std::vector<EventPlanner>& branches, bool has_else) {
  std::size_t before = ops_.size();
  // The alternatives: every branch, and without an else this planner (no branch ran).
  const EventPlanner& first = has_else ? branches.front() : *this;
  std::vector<std::vector<int>> knows = first.clock_;
  std::set<int> forked = first.forked_;
  for (const EventPlanner& b : branches) {
    for (std::size_t q = before; q < b.ops_.size(); ++q) {
      ops_.push_back(b.ops_[q]);
      ops_.back().in_branch = true;
    }
    used_.insert(b.used_.begin(), b.used_.end());
    for (std::size_t s = 0; s < clock_.size(); ++s)
      for (std::size_t t = 0; t < clock_.size(); ++t)
        knows[s][t] = s == t ? std::max(knows[s][t], b.clock_[s][t]) : std::min(knows[s][t], b.clock_[s][t]);
    std::set<int> both;
    for (int s : forked)
      if (b.forked_.count(s)) both.insert(s);
    forked = std::move(both);
  }
  clock_ = std::move(knows);
  forked_ = std::move(forked);
}

std::set<int> EventPlanner::enter_loop() {
  std::set<int> forks;
  for (int s = 1; s < static_cast<int>(clock_.size()); ++s)
    if (forked_.insert(s).second) {
      forks.insert(s);
      learn(static_cast<std::size_t>(s), clock_[0]);
    }
  return forks;
}

void EventPlanner::end_loop_in_chain(Block& loop, const std::set<int>& forks, const std::set<int>& loop_used,
                                     bool chain_ends) {
  std::set<int> used;
  for (int s : forks)
    if (loop_used.count(s)) used.insert(s);
  fork_and_join(loop, used, chain_ends);
}

void EventPlanner::begin_loop() {
  for (int s = 1; s < static_cast<int>(clock_.size()); ++s) forked_.insert(s);
}

void EventPlanner::end_loop(Block& loop) {
  std::set<int> used;
  for (int s : used_)
    if (s != 0) used.insert(s);
  fork_and_join(loop, used, true);
}

void EventPlanner::learn(std::size_t s, std::vector<int> clock) {
  for (std::size_t t = 0; t < clock_.size(); ++t) clock_[s][t] = std::max(clock_[s][t], clock[t]);
}

void EventPlanner::fork_and_join(Block& b, const std::set<int>& forks, bool join) {
  b.fork_streams.assign(forks.begin(), forks.end());
  std::set<int> joins;
  if (join)
    for (int s : used_) {
      auto S = static_cast<std::size_t>(s);
      if (s != 0 && clock_[0][S] < clock_[S][S]) joins.insert(s);
    }
  set_joins(b, joins, next_event_);
  if (b.fork_streams.empty())
    b.fork_event = -1;
  else if (b.fork_event < 0)
    b.fork_event = next_event_++;
}

}  // namespace sdfc
