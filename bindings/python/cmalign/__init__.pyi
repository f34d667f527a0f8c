# Generated from the command definitions (cmalign/internal/commands.hpp) by
# cmalign._stub_text(); do not edit.
import os
from typing import Any, Mapping, Optional, Sequence, Union

_Path = Union[str, "os.PathLike[str]"]
_Size = Union[int, str]
_Assignments = Union[Mapping[str, Union[str, int, bool, None, Sequence[int]]], Sequence[str]]
_Json = dict[str, Any]

__version__: str

class Error(ValueError):
    file: Optional[str]
    line: Optional[int]
    column: Optional[int]
    def __init__(self, message: str) -> None: ...

class KeywordError(Error, TypeError): ...

def clear_caches() -> None: ...

def calc(
    *,
    configs: Optional[Union[_Path, Sequence[_Path]]] = ...,
    sets: Optional[_Assignments] = ...,
    unsets: Optional[Union[str, Sequence[str]]] = ...,
    arch: Optional[str] = ...,
    kernel_version: Optional[str] = ...,
    kernel_tree: Optional[_Path] = ...,
    kconfig_shell: Optional[bool] = ...,
    limits: Optional[_Assignments] = ...,
    cache_dir: Optional[str] = ...,
) -> _Json: ...
def table(
    *,
    arch: Optional[str] = ...,
    kernel_version: Optional[str] = ...,
    kernel_tree: Optional[_Path] = ...,
) -> _Json: ...
def config(
    *,
    configs: Optional[Union[_Path, Sequence[_Path]]] = ...,
    sets: Optional[_Assignments] = ...,
    unsets: Optional[Union[str, Sequence[str]]] = ...,
    arch: Optional[str] = ...,
    kernel_version: Optional[str] = ...,
    kernel_tree: Optional[_Path] = ...,
    kconfig_shell: Optional[bool] = ...,
    limits: Optional[_Assignments] = ...,
    cache_dir: Optional[str] = ...,
) -> _Json: ...
def check(
    files: Optional[Union[_Path, Sequence[_Path]]] = ...,
    *,
    configs: Optional[Union[_Path, Sequence[_Path]]] = ...,
    sets: Optional[_Assignments] = ...,
    unsets: Optional[Union[str, Sequence[str]]] = ...,
    arch: Optional[str] = ...,
    kernel_version: Optional[str] = ...,
    kernel_tree: Optional[_Path] = ...,
    kconfig_shell: Optional[bool] = ...,
    limits: Optional[_Assignments] = ...,
    cache_dir: Optional[str] = ...,
    include_dirs: Optional[Union[_Path, Sequence[_Path]]] = ...,
    defines: Optional[_Assignments] = ...,
    overlays: Optional[Union[_Path, Sequence[_Path]]] = ...,
    bootargs: Optional[str] = ...,
    kernel_image: Optional[str] = ...,
    switches: Optional[Union[str, Sequence[str]]] = ...,
    werror: Optional[bool] = ...,
    jobs: Optional[int] = ...,
    affected_by: Optional[Union[_Path, Sequence[_Path]]] = ...,
    sweep_versions: Optional[str] = ...,
    sweep_page_sizes: Optional[str] = ...,
) -> _Json: ...
def tree(
    file: Optional[_Path] = ...,
    *,
    include_dirs: Optional[Union[_Path, Sequence[_Path]]] = ...,
    defines: Optional[_Assignments] = ...,
    overlays: Optional[Union[_Path, Sequence[_Path]]] = ...,
    kernel_tree: Optional[_Path] = ...,
    limits: Optional[_Assignments] = ...,
    path: Optional[str] = ...,
    format: Optional[str] = ...,
) -> _Json: ...
def fix(
    files: Optional[Union[_Path, Sequence[_Path]]] = ...,
    *,
    file: Optional[_Path] = ...,
    configs: Optional[Union[_Path, Sequence[_Path]]] = ...,
    sets: Optional[_Assignments] = ...,
    unsets: Optional[Union[str, Sequence[str]]] = ...,
    arch: Optional[str] = ...,
    kernel_version: Optional[str] = ...,
    kernel_tree: Optional[_Path] = ...,
    kconfig_shell: Optional[bool] = ...,
    limits: Optional[_Assignments] = ...,
    cache_dir: Optional[str] = ...,
    include_dirs: Optional[Union[_Path, Sequence[_Path]]] = ...,
    defines: Optional[_Assignments] = ...,
    overlays: Optional[Union[_Path, Sequence[_Path]]] = ...,
    bootargs: Optional[str] = ...,
    in_place: Optional[bool] = ...,
    out: Optional[_Path] = ...,
    diff: Optional[bool] = ...,
    jobs: Optional[int] = ...,
) -> _Json: ...
def suggest(
    files: Optional[Union[_Path, Sequence[_Path]]] = ...,
    *,
    configs: Optional[Union[_Path, Sequence[_Path]]] = ...,
    sets: Optional[_Assignments] = ...,
    unsets: Optional[Union[str, Sequence[str]]] = ...,
    arch: Optional[str] = ...,
    kernel_version: Optional[str] = ...,
    kernel_tree: Optional[_Path] = ...,
    kconfig_shell: Optional[bool] = ...,
    limits: Optional[_Assignments] = ...,
    cache_dir: Optional[str] = ...,
    include_dirs: Optional[Union[_Path, Sequence[_Path]]] = ...,
    defines: Optional[_Assignments] = ...,
    overlays: Optional[Union[_Path, Sequence[_Path]]] = ...,
    target_alignment: Optional[_Size] = ...,
    sweep_versions: Optional[str] = ...,
    sweep_page_sizes: Optional[str] = ...,
) -> _Json: ...
def pcp(
    *,
    configs: Optional[Union[_Path, Sequence[_Path]]] = ...,
    sets: Optional[_Assignments] = ...,
    unsets: Optional[Union[str, Sequence[str]]] = ...,
    arch: Optional[str] = ...,
    kernel_version: Optional[str] = ...,
    kernel_tree: Optional[_Path] = ...,
    kconfig_shell: Optional[bool] = ...,
    limits: Optional[_Assignments] = ...,
    cache_dir: Optional[str] = ...,
    memory: Optional[_Size] = ...,
    memory_base: Optional[_Size] = ...,
    zones: Optional[_Assignments] = ...,
    zoneinfo: Optional[_Path] = ...,
    cpus: Optional[int] = ...,
    sysctls: Optional[_Assignments] = ...,
    sysctl_file: Optional[_Path] = ...,
    bootargs: Optional[str] = ...,
    dt: Optional[_Path] = ...,
    vendor_params: Optional[Union[str, Sequence[str]]] = ...,
) -> _Json: ...
def heap(
    size: Optional[_Size] = ...,
    *,
    configs: Optional[Union[_Path, Sequence[_Path]]] = ...,
    sets: Optional[_Assignments] = ...,
    unsets: Optional[Union[str, Sequence[str]]] = ...,
    arch: Optional[str] = ...,
    kernel_version: Optional[str] = ...,
    kernel_tree: Optional[_Path] = ...,
    kconfig_shell: Optional[bool] = ...,
    limits: Optional[_Assignments] = ...,
    cache_dir: Optional[str] = ...,
    available_order: Optional[int] = ...,
) -> _Json: ...
def map(
    board: Optional[_Path] = ...,
    *,
    configs: Optional[Union[_Path, Sequence[_Path]]] = ...,
    sets: Optional[_Assignments] = ...,
    unsets: Optional[Union[str, Sequence[str]]] = ...,
    arch: Optional[str] = ...,
    kernel_version: Optional[str] = ...,
    kernel_tree: Optional[_Path] = ...,
    kconfig_shell: Optional[bool] = ...,
    limits: Optional[_Assignments] = ...,
    cache_dir: Optional[str] = ...,
    include_dirs: Optional[Union[_Path, Sequence[_Path]]] = ...,
    defines: Optional[_Assignments] = ...,
    overlays: Optional[Union[_Path, Sequence[_Path]]] = ...,
    bootargs: Optional[str] = ...,
    kernel_image: Optional[str] = ...,
) -> _Json: ...
def explain(
    log: Optional[_Path] = ...,
    board: Optional[_Path] = ...,
    *,
    configs: Optional[Union[_Path, Sequence[_Path]]] = ...,
    sets: Optional[_Assignments] = ...,
    unsets: Optional[Union[str, Sequence[str]]] = ...,
    arch: Optional[str] = ...,
    kernel_version: Optional[str] = ...,
    kernel_tree: Optional[_Path] = ...,
    kconfig_shell: Optional[bool] = ...,
    limits: Optional[_Assignments] = ...,
    cache_dir: Optional[str] = ...,
    include_dirs: Optional[Union[_Path, Sequence[_Path]]] = ...,
    defines: Optional[_Assignments] = ...,
    overlays: Optional[Union[_Path, Sequence[_Path]]] = ...,
    bootargs: Optional[str] = ...,
    kernel_image: Optional[str] = ...,
) -> _Json: ...
def boot_check(
    board: Optional[_Path] = ...,
    kernel: Optional[_Path] = ...,
    *,
    configs: Optional[Union[_Path, Sequence[_Path]]] = ...,
    sets: Optional[_Assignments] = ...,
    unsets: Optional[Union[str, Sequence[str]]] = ...,
    arch: Optional[str] = ...,
    kernel_version: Optional[str] = ...,
    kernel_tree: Optional[_Path] = ...,
    kconfig_shell: Optional[bool] = ...,
    limits: Optional[_Assignments] = ...,
    cache_dir: Optional[str] = ...,
    include_dirs: Optional[Union[_Path, Sequence[_Path]]] = ...,
    defines: Optional[_Assignments] = ...,
    overlays: Optional[Union[_Path, Sequence[_Path]]] = ...,
    bootargs: Optional[str] = ...,
    qemu: Optional[_Path] = ...,
    timeout: Optional[int] = ...,
    stop_early: Optional[bool] = ...,
    save_log: Optional[_Path] = ...,
    save_dtb: Optional[_Path] = ...,
) -> _Json: ...
