package bufferfs

// File I/O modes reported by [Disk.Mode].
const (
	ModeOpenat2  = "openat2"         // openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS
	ModeNoFollow = "posix-no-follow" // a per-component openat(O_NOFOLLOW) walk
)

// Mode names how d resolves paths: [ModeOpenat2] where the kernel has
// openat2, else [ModeNoFollow]. Status reports show it.
func (d *Disk) Mode() string {
	if d.openat2 {
		return ModeOpenat2
	}
	return ModeNoFollow
}
