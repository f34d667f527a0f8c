# shellcheck shell=bash
# A private apt state for Debian suites the machine does not list (bullseye, sid): its own sources
# list, package lists and archive cache under $CMALIGN_APT (default /opt/cmalign/apt). Packages are
# only ever *downloaded* through it (`apt-get download`, then `dpkg-deb -x`); the system's sources
# and dpkg database are never touched.
#
#   source scripts/lib/private-apt.sh
#   private_apt_update            # once; refreshes the lists when older than a day
#   private_apt_download PKG...   # .debs into $CMALIGN_APT/archives, prints their paths
#   private_apt_policy PKG        # apt-cache policy through the private state
CMALIGN_APT=${CMALIGN_APT:-/opt/cmalign/apt}
# Architectures whose package lists are read: kernel images for the boot tests are arm64, armhf and
# riscv64; source packages are "all".
CMALIGN_APT_ARCHES=${CMALIGN_APT_ARCHES:-amd64,arm64,armhf,riscv64}

# apt's binary cache of the lists is kept: without it every apt-cache call parses all thirteen
# lists again (11 s of CPU each); apt rebuilds it when the lists change.
private_apt_opts() {
    printf '%s\n' \
        -o "Dir::Etc::sourcelist=$CMALIGN_APT/sources.list" -o "Dir::Etc::sourceparts=$CMALIGN_APT/empty.d" \
        -o "Dir::Etc::preferencesparts=$CMALIGN_APT/empty.d" -o "Dir::Etc::preferences=$CMALIGN_APT/preferences" \
        -o "Dir::State::Lists=$CMALIGN_APT/lists" -o "Dir::Cache::archives=$CMALIGN_APT/archives" \
        -o "Dir::Cache::pkgcache=$CMALIGN_APT/pkgcache.bin" \
        -o "Dir::Cache::srcpkgcache=$CMALIGN_APT/srcpkgcache.bin" -o "APT::Get::List-Cleanup=0" \
        -o "APT::Architectures=$CMALIGN_APT_ARCHES" -o "APT::Sandbox::User=root" \
        -o "Acquire::Check-Valid-Until=false"
}

private_apt_setup() {
    mkdir -p "$CMALIGN_APT/lists/partial" "$CMALIGN_APT/archives/partial" "$CMALIGN_APT/empty.d"
    : >"$CMALIGN_APT/preferences"
    local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    # bookworm-security holds Debian 12's current linux-source-6.1/6.12 (all) and its arm64
    # images; apt takes a suite's lists all or none, so no index of it is read that nothing needs.
    cat >"$CMALIGN_APT/sources.list.new" <<SOURCES
deb [arch=$CMALIGN_APT_ARCHES signed-by=$keyring] http://deb.debian.org/debian bullseye main
deb [arch=$CMALIGN_APT_ARCHES signed-by=$keyring] http://deb.debian.org/debian bookworm main
deb [arch=amd64,arm64 signed-by=$keyring] http://deb.debian.org/debian-security bookworm-security main
deb [arch=$CMALIGN_APT_ARCHES signed-by=$keyring] http://deb.debian.org/debian sid main
SOURCES
    mv "$CMALIGN_APT/sources.list.new" "$CMALIGN_APT/sources.list"
}

private_apt_update() {
    private_apt_setup
    local stamp=$CMALIGN_APT/lists/.updated
    if [[ -f $stamp && -z $(find "$stamp" -mmin +1440) ]]; then
        return 0
    fi
    local opts attempt
    mapfile -t opts < <(private_apt_opts)
    # A mirror caught mid-sync fails an index ("Hash Sum mismatch", "unexpected size"): try
    # again, and never mark lists fresh that are not all there. When an index still fails, apt
    # has kept the others (and the old copy of that one): go on with them, as apt does; a
    # package they lack fails its download by name.
    for attempt in 1 2 3; do
        if apt-get "${opts[@]}" -qq update >&2; then
            touch "$stamp"
            return 0
        fi
        echo "private-apt: apt-get update failed (attempt $attempt of 3)" >&2
        ((attempt == 3)) || sleep $((attempt * 10))
    done
    if compgen -G "$CMALIGN_APT/lists/*_Packages*" >/dev/null; then
        echo "private-apt: warning: some package lists could not be fetched; going on with the" \
            "lists that were" >&2
        return 0
    fi
    return 1
}

private_apt_policy() {
    local opts
    mapfile -t opts < <(private_apt_opts)
    apt-cache "${opts[@]}" policy "$@"
}

# The newest version of PKG the private lists hold, or nothing.
private_apt_candidate() {
    private_apt_policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2; exit}' | grep -v '(none)' || true
}

private_apt_download() {
    local opts p
    mapfile -t opts < <(private_apt_opts)
    # A package the lists do not know: refresh them once (they may be a day old, or partial).
    # (PKG:ARCH is looked up as itself: the bare name asks for the host's architecture.)
    for p in "$@"; do
        if [[ -z $(private_apt_candidate "${p%%=*}") ]]; then
            rm -f "$CMALIGN_APT/lists/.updated"
            private_apt_update || return 1
            break
        fi
    done
    (cd "$CMALIGN_APT/archives" && apt-get "${opts[@]}" -qq download "$@" >&2) || {
        echo "private-apt: could not download: $*" >&2
        return 1
    }
    for p in "$@"; do
        local name=${p%%[=:]*} version=${p#*=}
        [[ $version == "$p" ]] && version=$(private_apt_candidate "$p")
        # Debian file names escape ':' in versions as %3a.
        ls "$CMALIGN_APT/archives/${name}_${version//:/%3a}_"*.deb
    done
}
