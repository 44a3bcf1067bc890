// Package journal keeps flow's per-workspace state outside the workspace
// (doc/design.md §12): the write journal that makes `flow undo` exact and independent
// of git, the stored run reports behind `flow status`, and the cross-process
// workspace lock.
//
// # Layout
//
// Everything lives under the state directory ([StateDir]), created 0700:
//
//	<state>/locks/<dev>-<ino>.lock         flock of one workspace; holds the holder's pid
//	<state>/workspaces/<dev>-<ino>-<hash>/ one workspace (root identity plus a path hash)
//	    root                               the workspace path, for people
//	    last.json                          the last finished run's report
//	    evicted                            ids of runs removed by retention
//	    runs/<seq>-<run id>/               one run, seq in start order
//	        meta.json                      run id, task, start time, pid
//	        log.jsonl                      the write journal, one JSON record a line
//	        blobs/<n>                      the content a file had before the run
//	        report.json                    the run's report (after Finish)
//	        undone.json                    the undo report, once the run is undone
//	        transcript.jsonl               each model call's new messages and reply (agent.transcript)
//
// # Durability
//
// [Run.BeforeWrite] is a tools.WriteHook: the first time a run touches a
// path it stores the previous content as a blob (temporary file, fsync,
// rename, fsync of the directory) and appends a record naming the blob, the
// old mode and the hash and mode the write will leave; every later write of
// the same path appends a record with the new hash and mode. Each record is
// one write(2) of a whole line followed by fsync, so when BeforeWrite returns
// the journal already describes the write. A crash can only leave a torn last
// line, which readers ignore, or an orphaned blob no record names.
//
// # Undo
//
// [Store.Undo] compares each journalled file's current raw bytes and mode
// (through the same [bufferfs.FS] the run used) with what the run wrote. A
// file that still holds one of the run's versions gets its old content and
// mode back, or is removed when the run created it; a file that already
// holds its old content is left as it is; anything else is a conflict and is
// never touched. Undo never runs git.
package journal
