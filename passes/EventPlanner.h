/// \file
/// The synchronization pass's events within a chain of states (passes/Synchronization.cpp walks
/// the control flow and calls this planner for each chain): vector clocks per stream, the waits an
/// operation needs and the events that serve them, forks and joins recorded on the blocks.
#pragma once

#include <set>
#include <vector>

#include "analysis/GpuOps.h"
#include "ir/SDFG.h"

namespace sdfc {

/// Events between the streams of a chain of states (one state, or states that follow each other
/// without a branch, see `chain_links`). Each operation gets a sequence number on its stream and a
/// vector clock (how far it knows every other stream to be); an operation waits for a conflicting
/// earlier one of the chain on another stream only when its stream does not know it yet, and the
/// earlier operation then records an event (one per operation, shared by all its waiters). A stream
/// joins the chain at the start of the first state that uses it (the fork: it waits for stream 0's
/// work so far); at the chain's end every stream joins back into stream 0.
class EventPlanner {
 public:
  EventPlanner(int streams, int& next_event);

  /// A state of the chain starts: streams it uses first are forked here.
  void begin_state();

  /// Orders an operation on `stream` after the conflicting earlier ones (same container, one of
  /// them writing, parts that may overlap); returns the events to wait for. `record` is where the
  /// operation's own event goes if a later one needs it.
  std::vector<int> order(int stream, const std::vector<Touch>& touches, int* record);

  /// The planner a branch of a conditional in the chain starts from: this one, with every stream's
  /// sequence numbers past those the earlier branches (`earlier`, planned from this one) used, so
  /// that no two operations of the chain share a stream and a number.
  EventPlanner branch(const std::vector<EventPlanner>& earlier) const;

  /// After a conditional of the chain whose branches were planned from branch(): whichever ran,
  /// later operations are ordered after it. The branches' operations join the chain's, marked as
  /// in a branch (a wait for one orders after it when it ran, and costs nothing when it did not);
  /// a stream knows of another only what it knows after every branch (`has_else`: else after
  /// none, as before the conditional) and counts past every branch's numbers; it counts as forked
  /// when every branch forked it.
  void merge(const std::vector<EventPlanner>& branches, bool has_else);

  /// A state of the chain ends: its fork (the streams it used first), and the join when the chain
  /// ends with it (every stream of the chain whose work stream 0 does not know yet).
  void end_state(Block& st, bool chain_ends) { fork_and_join(st, state_forks_, chain_ends); }

  /// A conditional of the chain ends (merge): no fork of its own; the join when the chain ends with it.
  void end_conditional(Block& c, bool chain_ends) { fork_and_join(c, {}, chain_ends); }

  /// A loop of the chain starts (on a copy: branch()): every stream the chain has not forked yet
  /// forks here, before the loop (returned: those the loop uses become its fork, see end_loop_in_chain),
  /// so that no state of the body forks (a fork per iteration would order each iteration's work after
  /// stream 0's of the one before).
  std::set<int> enter_loop();
  /// A loop of the chain ends (after merge() with the copy that planned its iterations): its fork
  /// before it (of `forks` from enter_loop, those the loop used), and the join when the chain ends
  /// with it.
  void end_loop_in_chain(Block& loop, const std::set<int>& forks, const std::set<int>& loop_used, bool chain_ends);

  /// The streams the chain used so far.
  const std::set<int>& used() const { return used_; }

  /// A loop whose streams carry their work across iterations (see block_chain): every stream but 0
  /// counts as forked before its first iteration, so that no state of the body forks (a fork per
  /// iteration would order each iteration's work after stream 0's of the one before).
  void begin_loop();
  /// ... and after its iterations were planned: the fork before the loop (the streams the body
  /// uses) and the join after it, on the loop block.
  void end_loop(Block& loop);

 private:
  struct Op {
    int stream, seq;
    std::vector<int> clock;
    int* record;
    std::vector<Touch> touches;
    bool in_branch;  ///< queued in a branch of a conditional of the chain (merge): it may not have run
  };
  int& next_event_;
  std::vector<std::vector<int>> clock_;  ///< per stream: the last sequence number it knows of each stream
  std::vector<Op> ops_;                  ///< the chain's operations so far
  std::set<int> used_;                   ///< streams the chain used
  std::set<int> forked_;                 ///< streams other than 0 the chain forked
  std::vector<int> fork_clock_;          ///< stream 0's clock at the current state's start
  std::set<int> state_forks_;            ///< streams forked at the current state's start

  /// Stream `s` now knows what `clock` knows (a wait for an event, or a fork; a copy, since it may be
  /// one of this planner's own clocks).
  void learn(std::size_t s, std::vector<int> clock);

  /// Records on `b` the fork of `forks` at its start and, with `join`, the join at its end of every
  /// stream whose work stream 0 does not know yet. Events keep their ids across the fixpoint's rounds.
  void fork_and_join(Block& b, const std::set<int>& forks, bool join);
};

}  // namespace sdfc
