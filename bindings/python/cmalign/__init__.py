"""cmalign: will the kernel accept this device tree's CMA reservations?

Every function returns what ``cmalign COMMAND --format json`` prints, as plain dicts and lists,
and raises :class:`Error` on bad input (an unreadable or unparsable file, a contradictory
configuration, an unknown keyword). Findings are data, not exceptions: ``check()`` returns them
under ``"diagnostics"``.

The keyword arguments are the keys of the C API's JSON request (``cmalign/cmalign.h``); both go
through the same code in the library. Paths may be ``str`` or ``os.PathLike``.
"""
import json as _json
import os as _os
import re as _re

from . import _cmalign

__all__ = ["Error", "calc", "check", "fix", "suggest", "table", "config", "tree", "pcp", "heap",
           "explain", "boot_check", "__version__"]

__version__ = _cmalign.__version__


class Error(ValueError):
    """Bad input. ``str(error)`` is ``"file:line:col: error: message"`` as the CLI prints it;
    ``file``, ``line`` and ``column`` hold the location (``line``/``column`` None when unknown).
    """

    def __init__(self, message):
        super().__init__(message)
        self.file = None
        self.line = None
        self.column = None
        match = _re.match(r"^(.*?):(?:(\d+):(?:(\d+):)?)? (?:error|warning|note): ", message)
        if match and match.group(1) != "cmalign":
            self.file = match.group(1)
            self.line = int(match.group(2)) if match.group(2) else None
            self.column = int(match.group(3)) if match.group(3) else None


def _plain(value):
    if isinstance(value, _os.PathLike):
        return _os.fspath(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _run(command, **request):
    """Adding a command: one function like those below calling _run("name", ...)."""
    body = {k: _plain(v) for k, v in request.items() if v is not None}
    result, error = _cmalign.run(command, _json.dumps(body))
    if error is not None:
        raise Error(error)
    return _json.loads(result)


def calc(configs=(), sets=None, arch=None, kernel_version=None, kernel_tree=None, kconfig_shell=False, limits=None):
    """What the kernel computes for a configuration: page size, max order, pageblock_order and
    ``cma_min_alignment_bytes`` with the derivation of each (the ``cmalign calc`` object).

    configs: .config, defconfig or fragment files, later ones override earlier ones.
    sets: ``{"CONFIG_X": "y"}`` applied after the files (values ``str``, ``int`` or ``bool``).
    arch, kernel_version, kernel_tree: as ``--arch``, ``--kernel-version``, ``--kernel-tree``.
    kconfig_shell: run Kconfig's toolchain probes (``--kconfig-shell``) instead of assuming them.
    limits: ``{"node-depth": 1000}`` raises bounds on the work one input may cause, as
    ``--limit NAME=VALUE`` (names and defaults in docs/limits.md).

    >>> calc(arch="arm64", kernel_version="6.16",
    ...      sets={"CONFIG_ARM64_16K_PAGES": "y"})["cma_min_alignment_bytes"]
    33554432
    """
    return _run("calc", configs=list(configs), sets=sets, arch=arch,
                kernel_version=kernel_version, kernel_tree=kernel_tree, kconfig_shell=kconfig_shell or None, limits=limits)


def check(files, configs=(), sets=None, arch=None, kernel_version=None, kernel_tree=None,
          include_dirs=(), defines=None, bootargs=None, switches=(), werror=False,
          affected_by=(), jobs=None, overlays=(), sweep_versions=None, sweep_page_sizes=None, kconfig_shell=False, limits=None):
    """Every reservation the kernel will reject (the ``cmalign check`` object: ``alignment``,
    ``regions``, ``diagnostics``, ``summary``).

    files: .dts/.dtsi/.dtso/.dtb/.dtbo files or directories (searched for boards).
    include_dirs, defines: the DTS preprocessor's ``-I`` and ``-D`` (``{"NAME": "VALUE"}``).
    bootargs: overrides ``/chosen/bootargs``.
    switches: ``["-Wno-overlap", "-Ecma-areas"]`` as on the command line.
    affected_by: only the inputs whose tree includes one of these files.
    overlays: .dtso/.dtbo files applied to every base in order, as fdtoverlay does.
    sweep_versions ("6.1..6.18", "6.1,6.12", "boundaries", "all") and sweep_page_sizes
    ("4K,16K,64K", "all"): the ``--sweep-versions`` object ``{"sweep": [...], "pools": [...]}``,
    each entry what a single check of that version and page size gives.
    Configuration keywords as in :func:`calc`.
    """
    return _run("check", files=list(files), configs=list(configs), sets=sets, arch=arch,
                kernel_version=kernel_version, kernel_tree=kernel_tree, kconfig_shell=kconfig_shell or None,
                include_dirs=list(include_dirs), defines=defines, bootargs=bootargs,
                switches=list(switches), werror=werror, affected_by=list(affected_by), jobs=jobs,
                overlays=list(overlays), sweep_versions=sweep_versions,
                sweep_page_sizes=sweep_page_sizes, limits=limits)


def fix(file, out=None, in_place=False, diff=False, configs=(), sets=None, arch=None,
        kernel_version=None, kernel_tree=None, include_dirs=(), defines=None, bootargs=None, kconfig_shell=False, limits=None):
    """CMA pool sizes rounded up to the kernel's alignment where they are written (the
    ``cmalign fix`` object: ``edits``, ``diagnostics``, ``written``, ``alignment``).

    Without ``out``, ``in_place`` or ``diff`` nothing is written (a plan). ``diff=True`` adds the
    unified diff under ``"diff"``; ``out`` writes the edited board there; ``in_place`` rewrites
    the files atomically. Problems fix cannot repair (a size written with a macro, a misaligned
    base) are in ``"diagnostics"``. Other keywords as in :func:`check`.
    """
    return _run("fix", file=file, out=out, in_place=in_place, diff=diff, configs=list(configs),
                sets=sets, arch=arch, kernel_version=kernel_version, kernel_tree=kernel_tree, kconfig_shell=kconfig_shell or None,
                include_dirs=list(include_dirs), defines=defines, bootargs=bootargs, limits=limits)


def suggest(files=(), target_alignment=None, configs=(), sets=None, arch=None,
            kernel_version=None, kernel_tree=None, include_dirs=(), defines=None, kconfig_shell=False, limits=None):
    """Configuration changes that make the pools valid without growing them, best first (the
    ``cmalign suggest`` object: ``suggestions``, ``needed_alignment_bytes``, ...).

    files: boards whose pools must stay as they are; or target_alignment (bytes, or "32M").
    """
    return _run("suggest", files=list(files), target_alignment=target_alignment,
                configs=list(configs), sets=sets, arch=arch, kernel_version=kernel_version,
                kernel_tree=kernel_tree, kconfig_shell=kconfig_shell or None, include_dirs=list(include_dirs), defines=defines, limits=limits)


def table(arch="arm64", kernel_version=None, kernel_tree=None):
    """The what-if grid (``{"rows": [...]}``): page sizes x HugeTLB/THP x max order (x page block
    order from 6.16) with the CMA alignment of each. The version: ``kernel_version``, else the
    ``kernel_tree``'s (or that of the tree the working directory lies in), else the newest
    modelled."""
    return _run("table", arch=arch, kernel_version=kernel_version, kernel_tree=kernel_tree)


def config(configs=(), sets=None, arch=None, kernel_version=None, kernel_tree=None, kconfig_shell=False, limits=None):
    """The configuration after merging the inputs: ``{"symbols": {"CONFIG_X": "value"}}``."""
    return _run("config", configs=list(configs), sets=sets, arch=arch,
                kernel_version=kernel_version, kernel_tree=kernel_tree, kconfig_shell=kconfig_shell or None, limits=limits)


def tree(file, path="/", format="json", include_dirs=(), defines=None, kernel_tree=None, limits=None):
    """The resolved device tree as dtc builds it: ``{"nodes": [...]}``, or with
    ``format="dts"`` ``{"dts": text}``. ``path`` selects a subtree ("/reserved-memory")."""
    return _run("tree", file=file, path=path, format=format, include_dirs=list(include_dirs),
                defines=defines, kernel_tree=kernel_tree, limits=limits)


def _text(value):
    return None if value is None else str(value)


def pcp(memory=None, zones=None, zoneinfo=None, cpus=None, sysctls=None, sysctl_file=None,
        bootargs=None, dt=None, vendor_params=(), memory_base=None, configs=(), sets=None,
        arch=None, kernel_version=None, kernel_tree=None, kconfig_shell=False):
    """Per-CPU page lists and watermarks as the kernel computes them (the ``cmalign pcp``
    object: batch, high_min/high_max, min_free_kbytes, watermarks, by_scale, zones).

    Memory as one of: memory (total RAM, "1G" or bytes; memory_base its physical start),
    zones (``{"DMA32": "3G", "Normal": "12G"}``: managed memory per zone) or zoneinfo (a copy
    of the board's /proc/zoneinfo, compared with what is computed). cpus: CPUs per node.
    sysctls (``{"vm.min_free_kbytes": 67584}``, list values joined by spaces) or sysctl_file:
    the board's vm sysctls. bootargs or dt (a board whose /chosen/bootargs is read);
    vendor_params: non-upstream parameters to apply (``["pcp_batch_scale_max"]``).
    """
    if sysctls:
        sysctls = {k: " ".join(str(x) for x in v) if isinstance(v, (list, tuple)) else v
                   for k, v in sysctls.items()}
    return _run("pcp", memory=_text(memory), zones=zones, zoneinfo=zoneinfo, cpus=cpus,
                sysctls=sysctls, sysctl_file=sysctl_file, bootargs=bootargs, dt=dt,
                vendor_params=list(vendor_params), memory_base=_text(memory_base),
                configs=list(configs), sets=sets, arch=arch, kernel_version=kernel_version,
                kernel_tree=kernel_tree, kconfig_shell=kconfig_shell or None)


def heap(size, available_order=None, configs=(), sets=None, arch=None, kernel_version=None,
         kernel_tree=None, kconfig_shell=False):
    """The dma-buf system heap's chunk plan for one allocation of ``size`` (bytes or "10M"):
    the ``cmalign heap`` object (page_size, orders, chunks, sg_entries, total_bytes).
    available_order: the plan when blocks above that order are exhausted."""
    return _run("heap", size=_text(size), available_order=available_order,
                configs=list(configs), sets=sets, arch=arch, kernel_version=kernel_version,
                kernel_tree=kernel_tree, kconfig_shell=kconfig_shell or None)


def explain(log, board, configs=(), sets=None, arch=None, kernel_version=None, kernel_tree=None,
            include_dirs=(), defines=None, bootargs=None, kconfig_shell=False):
    """What a boot log shows happened to each reservation of ``board``, why, and the fix (the
    ``cmalign explain`` object: kernel_version, nodes, unmatched_log_lines)."""
    return _run("explain", log=log, board=board, configs=list(configs), sets=sets, arch=arch,
                kernel_version=kernel_version, kernel_tree=kernel_tree, kconfig_shell=kconfig_shell or None,
                include_dirs=list(include_dirs), defines=defines, bootargs=bootargs)


def boot_check(board, kernel, configs=(), sets=None, arch=None, kernel_version=None,
               kernel_tree=None, include_dirs=(), defines=None, overlays=(), bootargs=None,
               qemu=None, timeout=None, save_log=None, save_dtb=None, kconfig_shell=False):
    """Boots ``kernel`` in QEMU's virt machine with the board's memory and reservations grafted
    on, and returns the ``cmalign boot-check`` object: per reservation what that kernel did
    (``kernel``, ``kernel_lost``, ``kernel_log``) next to check's verdict (``check``,
    ``findings``, ``agree``); a boot that did not happen has ``errors`` and ``log_tail``."""
    return _run("boot_check", board=board, kernel=kernel, configs=list(configs), sets=sets,
                arch=arch, kernel_version=kernel_version, kernel_tree=kernel_tree,
                include_dirs=list(include_dirs), defines=defines, overlays=list(overlays),
                bootargs=bootargs, qemu=qemu, timeout=timeout, save_log=save_log,
                save_dtb=save_dtb, kconfig_shell=kconfig_shell or None)
