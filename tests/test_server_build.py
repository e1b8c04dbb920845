"""Which llama.cpp CPU variants install.sh builds (clsd.serving.server_build), and the server it installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from clsd.serving.server_build import CPUINFO_FLAG, FALLBACKS, best_variant, chosen_variants, cpu_flags, x86_variants

# The shape of llama.cpp's ggml/src/CMakeLists.txt variant block (a subset of its variants, written for this test)
CMAKE = """
function(ggml_add_cpu_backend_variant tag_name)
    if (GGML_SYSTEM_ARCH STREQUAL "x86")
        set(GGML_AVX2 OFF)
    elseif (GGML_SYSTEM_ARCH STREQUAL "ARM")
    endif()
    ggml_add_cpu_backend_variant_impl(${tag_name})
endfunction()

if (GGML_CPU_ALL_VARIANTS)
    if (GGML_SYSTEM_ARCH STREQUAL "x86")
        ggml_add_cpu_backend_variant(x64)
        ggml_add_cpu_backend_variant(sse42              SSE42)
        ggml_add_cpu_backend_variant(haswell            SSE42 AVX F16C FMA AVX2 BMI2)
        ggml_add_cpu_backend_variant(skylakex           SSE42 AVX F16C FMA AVX2 BMI2 AVX512)
        if (NOT MSVC)
            ggml_add_cpu_backend_variant(cooperlake     SSE42 AVX F16C FMA AVX2 BMI2 AVX512 AVX512_VNNI AVX512_BF16)
            ggml_add_cpu_backend_variant(zen4           SSE42 AVX F16C FMA AVX2 BMI2 AVX512 AVX512_VBMI AVX512_VNNI AVX512_BF16)
        endif()
        ggml_add_cpu_backend_variant(alderlake          SSE42 AVX F16C FMA AVX2 BMI2 AVX_VNNI)
        if (NOT MSVC)
            ggml_add_cpu_backend_variant(sapphirerapids SSE42 AVX F16C FMA AVX2 BMI2 AVX512 AVX512_VBMI AVX512_VNNI AVX512_BF16 AMX_TILE AMX_INT8)
        endif()
    elseif(GGML_SYSTEM_ARCH STREQUAL "ARM")
        ggml_add_cpu_backend_variant(armv8.0_1)
    endif()
endif()
"""
AVX2 = "fpu sse sse2 ssse3 sse4_1 sse4_2 avx f16c fma avx2 bmi1 bmi2"
XEON_VNNI_BF16 = AVX2 + " avx512f avx512dq avx512cd avx512bw avx512vl avx512_vnni avx512_bf16"
EPYC_ZEN4 = XEON_VNNI_BF16 + " avx512vbmi avx512_vbmi2 avx512ifma"
AMX = EPYC_ZEN4 + " amx_bf16 amx_tile amx_int8"


def test_the_variant_list_is_read_from_llama_cpp_s_cmake():
    variants = x86_variants(CMAKE)
    assert list(variants) == ["x64", "sse42", "haswell", "skylakex", "cooperlake", "zen4", "alderlake", "sapphirerapids"]
    assert variants["x64"] == () and variants["haswell"] == ("SSE42", "AVX", "F16C", "FMA", "AVX2", "BMI2")


@pytest.mark.parametrize("flags, best, without_amx", [
    (AVX2, "haswell", None), (XEON_VNNI_BF16, "cooperlake", None), (EPYC_ZEN4, "zen4", None),
    (AMX, "sapphirerapids", "zen4"), ("fpu sse sse2", "x64", None)],
    ids=["AVX2 only", "AVX-512 VNNI BF16", "EPYC with VBMI", "AMX", "no SSE4.2"])
def test_the_best_variant_is_the_richest_the_cpu_supports_and_fallbacks_come_with_it(flags, best, without_amx):
    """A CPU that lists AMX also gets the best variant without it: a VM may list AMX and raise SIGILL at its first
    tile instruction, and the server should then fall to zen4, not to haswell."""
    cpuinfo = f"processor\t: 0\nflags\t\t: {flags}\nprocessor\t: 1\nflags\t\t: fpu\n"
    variants = x86_variants(CMAKE)
    assert best_variant(variants, cpu_flags(cpuinfo)) == best
    chosen = chosen_variants(variants, cpu_flags(cpuinfo), None)
    expected = [best, *([without_amx] if without_amx else []), *FALLBACKS]
    assert chosen == list(dict.fromkeys(expected))


def test_variants_can_be_asked_for_and_unknown_ones_are_named():
    variants = x86_variants(CMAKE)
    assert chosen_variants(variants, set(), "all") == list(variants)
    assert chosen_variants(variants, set(), "zen4, x64") == ["zen4", "x64"]
    with pytest.raises(ValueError, match=r"unknown variant\(s\) zen5; known: x64, sse42"):
        chosen_variants(variants, set(), "zen4,zen5")


INSTALLED = Path(sys.executable).parent / "llama-server"


def test_install_sh_built_llama_server_with_a_variant_for_this_cpu():
    if not INSTALLED.is_file():
        pytest.skip(f"no llama-server at {INSTALLED} (bash install.sh builds it)")
    folder = INSTALLED.resolve().parent
    stamp = json.loads((folder / "build.json").read_text())
    assert set(FALLBACKS) <= set(stamp["variants"])
    assert sorted(p.name for p in folder.glob("libggml-cpu-*.so")) == sorted(f"libggml-cpu-{v}.so" for v in stamp["variants"])
    flags = cpu_flags(Path("/proc/cpuinfo").read_text())
    assert stamp["cpu_flags"] == " ".join(sorted(flags & set(CPUINFO_FLAG.values())))
    version = subprocess.run([str(INSTALLED), "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and "version" in (version.stdout + version.stderr)
