package bufferfs

import "time"

// Test hooks into unexported state.

// SetOpenat2 forces the fallback openat walk (on=false) or openat2 (on=true).
func SetOpenat2(d *Disk, on bool) { d.openat2 = on }

// UsesOpenat2 reports whether d resolves paths with openat2.
func UsesOpenat2(d *Disk) bool { return d.openat2 }

// SetListCaps lowers the listing caps.
func SetListCaps(d *Disk, files, visited int) {
	d.maxListFiles, d.maxListVisited = files, visited
}

// SetBeforeRename installs a hook run just before the atomic rename.
func SetBeforeRename(d *Disk, f func()) { d.beforeRename = f }

// SetTempScanEvery sets how often one directory is scanned for stale
// temporary files.
func SetTempScanEvery(d *Disk, every time.Duration) { d.scanEvery = every }

// Temporary-file naming and staleness, for the crash test.
var (
	ParseTempName = parseTempName
	TempPrefix    = tempPrefix
	StaleTempAge  = staleTempAge
	DeadTempAge   = deadTempAge
)
