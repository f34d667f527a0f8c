// cmalign pcp: per-CPU page list batch/high, watermarks and min_free_kbytes of a board.
#include <iostream>

#include "cmalign/tune.hpp"
#include "common.hpp"

namespace cmalign::cli {

void register_pcp(CLI::App& app, ExitCode& exit_code) {
    auto* cmd = app.add_subcommand(
        "pcp", "per-CPU page lists (batch, high, pages per zone-lock hold), watermarks and "
               "min_free_kbytes, as the kernel computes them");
    auto request = std::make_shared<PcpRequest>();
    auto format = std::make_shared<std::string>("text");
    add_config_options(*cmd, request->config);
    cmd->add_option("--memory", request->memory,
                    "total RAM (zones and managed pages are estimated for the arch)");
    cmd->add_option("--memory-base", request->memory_base,
                    "physical address where RAM starts, for --memory (default 0)");
    cmd->add_option("--zone", request->zones,
                    "NAME=SIZE: managed memory of a zone (DMA, DMA32, Normal, HighMem, Movable); "
                    "repeatable");
    cmd->add_option("--zoneinfo", request->zoneinfo,
                    "a /proc/zoneinfo from the board: managed pages, CPUs, and values to compare");
    cmd->add_option("--cpus", request->cpus,
                    "CPUs of each NUMA node (default: from --zoneinfo, "
                    "else 1)");
    cmd->add_option("--sysctl", request->sysctls,
                    "vm.NAME=VALUE in effect on the board (min_free_kbytes, "
                    "watermark_scale_factor, percpu_pagelist_high_fraction, "
                    "lowmem_reserve_ratio); repeatable");
    cmd->add_option("--sysctl-file", request->sysctl_file,
                    "\"vm.NAME = VALUE\" lines, as `sysctl vm.min_free_kbytes ...` prints them");
    cmd->add_option("--bootargs", request->bootargs, "kernel command line");
    cmd->add_option("--dt", request->dt, "a .dts/.dtb whose /chosen/bootargs is the command line");
    cmd->add_option("--vendor-param", request->vendor_params,
                    "apply a non-upstream boot parameter with its proposed semantics "
                    "(pcp_batch_scale_max); repeatable");
    add_format(cmd, *format);
    on_run(cmd, [request, format, &exit_code] {
        auto outcome = run_pcp(*request);
        print_diagnostics(outcome.diags);
        exit_code = outcome.exit_code();
        if (exit_code == ExitCode::input_error) return;
        if (*format == "json")
            std::cout << pcp_json(outcome).dump(2) << '\n';
        else
            std::cout << pcp_text(outcome);
    });
}

void register_heap(CLI::App& app, ExitCode& exit_code) {
    auto* cmd = app.add_subcommand(
        "heap", "chunk plan of one dma-buf system heap allocation (orders 8, 4, 0)");
    auto request = std::make_shared<HeapRequest>();
    auto format = std::make_shared<std::string>("text");
    add_config_options(*cmd, request->config);
    cmd->add_option("--size", request->size, "allocation size (page-rounded as the ioctl does)")
        ->required();
    cmd->add_option("--available-order", request->available_order,
                    "assume blocks above this order are exhausted");
    add_format(cmd, *format);
    on_run(cmd, [request, format, &exit_code] {
        auto outcome = run_heap(*request);
        print_diagnostics(outcome.diags);
        exit_code = outcome.exit_code();
        if (exit_code == ExitCode::input_error) return;
        if (*format == "json")
            std::cout << heap_json(outcome).dump(2) << '\n';
        else
            std::cout << heap_text(outcome);
    });
}

} // namespace cmalign::cli
