// Package verify computes flow's host-side verification: the
// static-analysis coverage of each changed file (its language as package
// lang decides it) from named checks and editor evidence, raw-byte
// fingerprints of changed files, and the verified decision that combines
// them. Apart from hashing through [bufferfs.FS] and the probes of its
// collaborators, it is pure logic; nothing here trusts what the model
// claims.
//
// [Gate] owns "verified": a cycle calls Begin when the coder finished,
// Verify for the checks, Recheck after review and Verified with the role
// outcomes, and keeps no freshness state of its own. [EditorChecks] is the
// check runner a service with an editor gives both the gate and the
// flow_check tool. The gate's building blocks (Coverage, Decide,
// Fingerprints, the editor probes) stay exported so that each keeps its own
// focused tests.
//
// A gate with a [Guard] also keeps the model from gaming "verified": it
// compares each changed file with what it held before the run ([Originals],
// fed by the write hook) and refuses edits that weaken the checks (package
// weakening), compares the checks with a baseline measured before the
// coder's first edit ([MeasureBaseline], [CompareBaseline]), and can demand
// fail-then-pass evidence from a scratch copy (package scratch).
package verify
