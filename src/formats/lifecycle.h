// File: lifecycle.h
//
// The phases every built-in machine's statuses fall into, so that a run read
// in one system's vocabulary can be written in another's: a Stigmergy story
// that is AWAITING_VERIFICATION is "active", and a Sinfonia step written for
// it is "in-progress". Within one machine statuses are kept exactly; only a
// conversion between machines goes through the phase.

#ifndef BATON_SRC_FORMATS_LIFECYCLE_H_
#define BATON_SRC_FORMATS_LIFECYCLE_H_

#include <optional>
#include <string>
#include <string_view>

namespace baton {

enum class Phase { kPending, kActive, kWaiting, kDone, kFailed, kCancelled };

std::string_view PhaseName(Phase phase);

// The phase of "status" in the built-in machine "machine" ("sinfonia.step"),
// or std::nullopt for an unknown machine or status.
std::optional<Phase> PhaseOf(std::string_view machine, std::string_view status);

// The status "machine" uses for "phase" (its first status of that phase; a
// machine without one gives its nearest: kCancelled → failed, say).
std::string StatusFor(std::string_view machine, Phase phase);

// "status" of "from" written in "to": unchanged when the machines are the
// same, else through its phase (unknown statuses count as active).
std::string ConvertStatus(std::string_view from, std::string_view status, std::string_view to);

}  // namespace baton

#endif  // BATON_SRC_FORMATS_LIFECYCLE_H_
