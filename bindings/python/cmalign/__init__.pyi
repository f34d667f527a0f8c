# Types of the cmalign package (see cmalign/__init__.py for the documentation).
import os
from typing import Any, Mapping, Optional, Sequence, Union

_Path = Union[str, "os.PathLike[str]"]
_Value = Union[str, int, bool]
_Json = dict[str, Any]

__version__: str

class Error(ValueError):
    file: Optional[str]
    line: Optional[int]
    column: Optional[int]
    def __init__(self, message: str) -> None: ...

def calc(configs: Sequence[_Path] = ..., sets: Optional[Mapping[str, _Value]] = ...,
         arch: Optional[str] = ..., kernel_version: Optional[str] = ...,
         kernel_tree: Optional[_Path] = ...,
        kconfig_shell: bool = ...,
        limits: Optional[Mapping[str, Union[int, str]]] = ...) -> _Json: ...
def check(files: Sequence[_Path], configs: Sequence[_Path] = ...,
          sets: Optional[Mapping[str, _Value]] = ..., arch: Optional[str] = ...,
          kernel_version: Optional[str] = ..., kernel_tree: Optional[_Path] = ...,
          include_dirs: Sequence[_Path] = ..., defines: Optional[Mapping[str, Optional[_Value]]] = ...,
          bootargs: Optional[str] = ..., switches: Sequence[str] = ..., werror: bool = ...,
          affected_by: Sequence[_Path] = ..., jobs: Optional[int] = ...,
          overlays: Sequence[_Path] = ..., sweep_versions: Optional[str] = ...,
          sweep_page_sizes: Optional[str] = ...,
        kconfig_shell: bool = ...,
        limits: Optional[Mapping[str, Union[int, str]]] = ...) -> _Json: ...
def fix(file: _Path, out: Optional[_Path] = ..., in_place: bool = ..., diff: bool = ...,
        configs: Sequence[_Path] = ..., sets: Optional[Mapping[str, _Value]] = ...,
        arch: Optional[str] = ..., kernel_version: Optional[str] = ...,
        kernel_tree: Optional[_Path] = ..., include_dirs: Sequence[_Path] = ...,
        defines: Optional[Mapping[str, Optional[_Value]]] = ...,
        bootargs: Optional[str] = ...,
        kconfig_shell: bool = ...,
        limits: Optional[Mapping[str, Union[int, str]]] = ...) -> _Json: ...
def suggest(files: Sequence[_Path] = ..., target_alignment: Union[int, str, None] = ...,
            configs: Sequence[_Path] = ..., sets: Optional[Mapping[str, _Value]] = ...,
            arch: Optional[str] = ..., kernel_version: Optional[str] = ...,
            kernel_tree: Optional[_Path] = ..., include_dirs: Sequence[_Path] = ...,
            defines: Optional[Mapping[str, Optional[_Value]]] = ...,
        kconfig_shell: bool = ...,
        limits: Optional[Mapping[str, Union[int, str]]] = ...) -> _Json: ...
def table(arch: str = ..., kernel_version: Optional[str] = ...,
          kernel_tree: Optional[_Path] = ...) -> _Json: ...
def config(configs: Sequence[_Path] = ..., sets: Optional[Mapping[str, _Value]] = ...,
           arch: Optional[str] = ..., kernel_version: Optional[str] = ...,
           kernel_tree: Optional[_Path] = ...,
        kconfig_shell: bool = ...,
        limits: Optional[Mapping[str, Union[int, str]]] = ...) -> _Json: ...
def tree(file: _Path, path: str = ..., format: str = ..., include_dirs: Sequence[_Path] = ...,
         defines: Optional[Mapping[str, Optional[_Value]]] = ...,
         kernel_tree: Optional[_Path] = ...,
         limits: Optional[Mapping[str, Union[int, str]]] = ...) -> _Json: ...
def pcp(memory: Union[int, str, None] = ..., zones: Optional[Mapping[str, Union[int, str]]] = ...,
        zoneinfo: Optional[_Path] = ..., cpus: Optional[int] = ...,
        sysctls: Optional[Mapping[str, Union[int, str, Sequence[int]]]] = ...,
        sysctl_file: Optional[_Path] = ..., bootargs: Optional[str] = ...,
        dt: Optional[_Path] = ..., vendor_params: Sequence[str] = ...,
        memory_base: Union[int, str, None] = ..., configs: Sequence[_Path] = ...,
        sets: Optional[Mapping[str, _Value]] = ..., arch: Optional[str] = ...,
        kernel_version: Optional[str] = ..., kernel_tree: Optional[_Path] = ...,
        kconfig_shell: bool = ...) -> _Json: ...
def heap(size: Union[int, str], available_order: Optional[int] = ...,
         configs: Sequence[_Path] = ..., sets: Optional[Mapping[str, _Value]] = ...,
         arch: Optional[str] = ..., kernel_version: Optional[str] = ...,
         kernel_tree: Optional[_Path] = ...,
        kconfig_shell: bool = ...) -> _Json: ...
def explain(log: _Path, board: _Path, configs: Sequence[_Path] = ...,
            sets: Optional[Mapping[str, _Value]] = ..., arch: Optional[str] = ...,
            kernel_version: Optional[str] = ..., kernel_tree: Optional[_Path] = ...,
            include_dirs: Sequence[_Path] = ...,
            defines: Optional[Mapping[str, Optional[_Value]]] = ...,
            bootargs: Optional[str] = ...,
        kconfig_shell: bool = ...) -> _Json: ...
def boot_check(board: _Path, kernel: _Path, configs: Sequence[_Path] = ...,
               sets: Optional[Mapping[str, _Value]] = ..., arch: Optional[str] = ...,
               kernel_version: Optional[str] = ..., kernel_tree: Optional[_Path] = ...,
               include_dirs: Sequence[_Path] = ...,
               defines: Optional[Mapping[str, Optional[_Value]]] = ...,
               overlays: Sequence[_Path] = ..., bootargs: Optional[str] = ...,
               qemu: Optional[str] = ..., timeout: Optional[int] = ...,
               save_log: Optional[_Path] = ..., save_dtb: Optional[_Path] = ...,
               kconfig_shell: bool = ...) -> _Json: ...
