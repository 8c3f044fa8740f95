"""library-semantics: mapped library calls whose behaviour differs on ROCm.

Rules as data: FAMILIES holds, per CUDA library, the name patterns and what differs. One rule is
registered per family (not one rule for all), so a project can select or suppress, say, the
cuRAND reproducibility notes without losing the cuDNN ones, and each rule's documentation
describes one library precisely. All families share one check: a use of a matching name (found
the way the renamer finds names) that maps at the target; a name that does not map at all is
left to unsupported-api.
"""

from __future__ import annotations

import re
from functools import lru_cache

from hipport import regexes
from hipport.rules import Hit, rule
from hipport.rules import _syntax as sx
from hipport.rules.api_tables import table_name_uses
from hipport.tuples import NamedTuple


class Pattern(NamedTuple):
    regex: str  # a full-match pattern over CUDA names
    message: str
    suggestion: str
    severity: str = ""  # "" = the family's severity


class Family(NamedTuple):
    code: str
    name: str
    library: str
    severity: str
    effort: str
    patterns: tuple[Pattern, ...]
    doc: str
    # table libraries whose rows carry risk=library-semantics: those rows (message from their
    # note) belong to this family too
    risk_libraries: tuple[str, ...] = ()


FAMILIES: tuple[Family, ...] = (
    Family(
        "HP951", "cudnn-convolution-algorithm-selection", "cuDNN -> MIOpen", "warning", "high",
        (
            Pattern(r"cudnnFindConvolution(?:Forward|BackwardData|BackwardFilter)Algorithm(?:Ex)?",
                    "MIOpen's Find benchmarks the convolution and returns miopenConvAlgoPerf_t "
                    "(algorithm, time, memory); cuDNN's perf fields (status, determinism, "
                    "mathType) have no counterpart, and MIOpen requires this Find (or immediate "
                    "mode) before every convolution call on the same descriptors",
                    "run Find once per problem shape, cache the returned algorithm and workspace "
                    "size, and pass them to miopenConvolution*; or use MIOpen's immediate mode"),
            Pattern(r"cudnnConvolution(?:Forward|BackwardData|BackwardFilter)",
                    "MIOpen's convolution accepts only an algorithm that miopenFindConvolution*"
                    "Algorithm returned for these descriptors; an algorithm chosen by cuDNN "
                    "heuristics or hard-coded does not carry over",
                    "call the MIOpen Find for this shape first (or use immediate mode) and pass "
                    "its algorithm and workspace"),
            Pattern(r"CUDNN_CONVOLUTION_(?:FWD|BWD_DATA|BWD_FILTER)_ALGO_\w+",
                    "a hard-coded cuDNN convolution algorithm: MIOpen has its own algorithm "
                    "enums, and an algorithm is valid only if Find returned it for the shape",
                    "select the algorithm from MIOpen Find results instead of a constant"),
            Pattern(r"cudnnGetConvolution(?:Forward|BackwardData|BackwardFilter)WorkspaceSize",
                    "MIOpen's *GetWorkSpaceSize returns the workspace Find needs (the largest "
                    "over its algorithms), not the size for one chosen algorithm",
                    "allocate this size for Find, then use the memory field of the chosen "
                    "miopenConvAlgoPerf_t"),
        ),
        """Reports cuDNN convolution algorithm selection that MIOpen handles differently.

        What it does:
        Flags cudnnFindConvolution*Algorithm*, cudnnConvolutionForward/Backward*, hard-coded
        CUDNN_CONVOLUTION_*_ALGO_* values and the convolution workspace-size queries, when the
        tables map them to MIOpen.

        Why it matters on AMD GPUs:
        MIOpen's porting guide makes miopenFindConvolution*Algorithm mandatory before a
        convolution (or the immediate-mode API instead), its algorithm enums and perf results
        differ from cuDNN's, and its workspace query sizes the Find step. Code that picks an
        algorithm the cuDNN way compiles after renaming but fails or misbehaves at run time.

        Example:
        cudnnFindConvolutionForwardAlgorithmEx(h, xd, x, wd, w, cd, yd, y, 1, &n, &perf, ws, sz);

        Fix:
        Follow MIOpen's sequence: query the Find workspace, run Find once per shape and cache
        its result, then call miopenConvolution* with that algorithm; or use immediate mode.
        """,
        ("cudnn",),
    ),
    Family(
        "HP952", "cufft-callbacks", "cuFFT -> hipFFT", "warning", "medium",
        (
            Pattern(r"cufftXt(?:Set|Clear)Callback|CUFFT_CB_\w+|cufftCallback(?:Load|Store)[CZRD]",
                    "hipFFT forwards FFT callbacks to rocFFT, where they are an experimental "
                    "feature with restrictions (for example, not with planar layouts)",
                    "test the callback path on the AMD GPU, or fuse the pre/post-processing into "
                    "separate kernels"),
            Pattern(r"cufftXtSetCallbackSharedSize",
                    "rocFFT callbacks get no shared memory (the size must be 0)",
                    "rewrite the callback without shared memory, or move that work into a "
                    "separate kernel"),
        ),
        """Reports cuFFT load/store callbacks, which rocFFT supports only experimentally.

        What it does:
        Flags cufftXtSetCallback, cufftXtClearCallback, cufftXtSetCallbackSharedSize, the
        CUFFT_CB_* callback types and the cufftCallbackLoad*/Store* function types.

        Why it matters on AMD GPUs:
        The calls map to hipFFT, which passes callbacks to rocFFT. rocFFT documents callbacks as
        experimental, without callback shared memory and not for every data layout, so a
        transform that works with cuFFT callbacks may fail or need changes.

        Example:
        cufftXtSetCallback(plan, (void**)&h_load, CUFFT_CB_LD_COMPLEX, nullptr);

        Fix:
        Verify the transform with callbacks on the target GPU; otherwise apply the load/store
        processing in separate kernels before and after the FFT.
        """,
        ("cufft",),
    ),
    Family(
        "HP953", "cublas-math-mode", "cuBLAS -> hipBLAS", "warning", "medium",
        (
            Pattern(r"cublasSetMathMode|CUBLAS_(?:TF32_)?TENSOR_OP_MATH|CUBLAS_PEDANTIC_MATH"
                    r"|CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION",
                    "cuBLAS math modes select NVIDIA Tensor Core paths (TF32, tensor-op); hipBLAS "
                    "accepts the mode (HIP 6.1 and later) but which reduced-precision math is "
                    "used depends on the AMD GPU and backend, so accuracy and speed differ",
                    "decide the precision explicitly through the compute type of *GemmEx and "
                    "check results against a reference on the AMD GPU"),
            Pattern(r"CUBLAS_COMPUTE_32F_FAST_(?:TF32|16F|16BF)",
                    "a 'fast' FP32 compute type asks for reduced-precision Tensor Core math; "
                    "whether hipBLAS/rocBLAS uses a reduced format depends on the GPU",
                    "use CUBLAS_COMPUTE_32F where full FP32 accuracy is required, and validate "
                    "tolerances on the AMD GPU"),
        ),
        """Reports cuBLAS math modes and fast compute types tied to NVIDIA Tensor Cores.

        What it does:
        Flags cublasSetMathMode, the CUBLAS_*_MATH modes and the CUBLAS_COMPUTE_32F_FAST_*
        compute types when they map to hipBLAS.

        Why it matters on AMD GPUs:
        TF32 and tensor-op math are NVIDIA Tensor Core modes. hipBLAS has the names (from HIP
        6.1), but the reduced-precision formats that AMD matrix cores offer differ by GPU
        generation, so results and performance tuned for TF32 need to be re-validated.

        Example:
        cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH);

        Fix:
        Choose the compute type of each GEMM explicitly and compare against a full-precision
        reference on the AMD GPU.
        """,
        ("cublas",),
    ),
    Family(
        "HP954", "cublaslt-algorithm-heuristics", "cuBLASLt -> hipBLASLt", "warning", "medium",
        (
            Pattern(r"cublasLtMatmulAlgoGetHeuristic|cublasLtMatmulPreference(?:Set|Get)Attribute"
                    r"|CUBLASLT_MATMUL_PREF_\w+",
                    "hipBLASLt returns its own algorithm list from its own heuristics; cuBLASLt "
                    "preferences and algorithm choices (and any cached algorithm data) do not "
                    "carry over",
                    "query hipBLASLt's heuristics at run time and re-tune any cached choice on "
                    "the AMD GPU"),
            Pattern(r"cublasLtMatmulAlgo_t",
                    "a cuBLASLt algorithm object: its content is specific to cuBLASLt and the "
                    "GPU, so a stored or hand-built algorithm is meaningless to hipBLASLt",
                    "obtain algorithms from hipblasLtMatmulAlgoGetHeuristic on the target GPU"),
        ),
        """Reports cuBLASLt algorithm selection, whose results do not transfer to hipBLASLt.

        What it does:
        Flags cublasLtMatmulAlgoGetHeuristic, the matmul preference attribute calls and
        CUBLASLT_MATMUL_PREF_* values, and cublasLtMatmulAlgo_t, when they map to hipBLASLt.

        Why it matters on AMD GPUs:
        hipBLASLt has the same shape of API, but its heuristics, algorithm set and supported
        preferences are its own; algorithms tuned or cached for cuBLASLt cannot be reused.

        Example:
        cublasLtMatmulAlgoGetHeuristic(lt, op, a, b, c, d, pref, 1, &result, &count);

        Fix:
        Let hipBLASLt choose at run time (or re-tune on the AMD GPU) and drop cached cuBLASLt
        algorithm data from the HIP build.
        """,
    ),
    Family(
        "HP955", "curand-sequence-reproducibility", "cuRAND -> hipRAND", "warning", "low",
        (
            Pattern(r"curandSetGeneratorOrdering|CURAND_ORDERING_\w+",
                    "rocRAND's orderings are not cuRAND's: with the same seed and ordering most "
                    "generators (all but Sobol32/Sobol64) produce different sequences",
                    "do not compare random streams across vendors; validate statistically"),
            Pattern(r"curandSetPseudoRandomGeneratorSeed|curand_init",
                    "the same seed gives a different sequence on ROCm: rocRAND documents only "
                    "its Sobol32/Sobol64 generators as reproducing cuRAND",
                    "keep seeding for run-to-run reproducibility on one platform, but do not "
                    "expect NVIDIA's numbers (golden files, tests)", "info"),
        ),
        """Reports cuRAND seeding and ordering that rocRAND does not reproduce bit for bit.

        What it does:
        Flags curandSetGeneratorOrdering and CURAND_ORDERING_* (warning), and the seeding calls
        curandSetPseudoRandomGeneratorSeed and curand_init (info).

        Why it matters on AMD GPUs:
        hipRAND runs on rocRAND, whose documentation lists only the Sobol32 and Sobol64
        generators as producing cuRAND's sequences; XORWOW, Philox, MRG32k3a, MTGP32 and
        MT19937 give different numbers for the same seed, so tests with golden values break.

        Example:
        curandSetGeneratorOrdering(gen, CURAND_ORDERING_PSEUDO_LEGACY);

        Fix:
        Regenerate golden data on ROCm or compare distributions instead of exact values.
        """,
        ("curand",),
    ),
    Family(
        "HP956", "cusparse-generic-algorithm-choice", "cuSPARSE -> hipSPARSE", "warning", "low",
        (
            Pattern(r"CUSPARSE_(?:SPMM|SPMV|SPGEMM|SPSV|SPSM|SDDMM|SPARSETODENSE|DENSETOSPARSE"
                    r"|MV|MM|CSRMV|CSRMM)_\w*ALG\w*",
                    "hipSPARSE maps cuSPARSE generic-API algorithm enums onto rocSPARSE's own "
                    "algorithms: buffer sizes, determinism and performance differ",
                    "query the buffer size for the algorithm on ROCm (never reuse a cuSPARSE "
                    "size) and re-benchmark the algorithm choice"),
        ),
        """Reports cuSPARSE generic-API algorithm choices that map to different rocSPARSE kernels.

        What it does:
        Flags CUSPARSE_SPMM_*, SPMV_*, SPGEMM_*, SPSV_*, SPSM_*, SDDMM_*, sparse/dense
        conversion and legacy CSRMV/CSRMM algorithm enumerators that map to hipSPARSE.

        Why it matters on AMD GPUs:
        The enum names map one to one, but rocSPARSE implements its own algorithms behind them,
        so the required buffer size, run-to-run reproducibility and the fastest choice differ.

        Example:
        cusparseSpMM(h, opA, opB, &a, A, B, &b, C, CUDA_R_32F, CUSPARSE_SPMM_CSR_ALG2, buf);

        Fix:
        Call the matching *_bufferSize with the same algorithm on ROCm and re-measure which
        algorithm is fastest for your matrices.
        """,
        ("cusparse",),
    ),
)


FAMILIES += (
    Family(
        "HP957", "library-difference-noted-in-tables", "CUDA library -> ROCm", "warning",
        "medium", (),
        """Reports mapped library names that the mapping tables mark as behaving differently.

        What it does:
        Flags uses of names whose mapping-table row carries risk=library-semantics and that no
        library-specific rule above covers (today: the NCCL -> RCCL rows), quoting the row's
        note on the difference.

        Why it matters on AMD GPUs:
        The renamed call compiles against the ROCm library, but the tables record a difference
        in behaviour. For example, RCCL converts its FP8 datatypes with the FNUZ encoding that
        MI300 uses, while NCCL's ncclFloat8e4m3/e5m2 are OCP FP8, so the same bytes mean
        different values.

        Example:
        ncclAllReduce(buf, buf, n, ncclFloat8e4m3, ncclSum, comm, stream);

        Fix:
        Read the note in the finding, check the ROCm library's documentation for the API, and
        test the ported path with real data on the AMD system.
        """,
        ("*",),
    ),
)


@lru_cache(maxsize=1)
def name_pattern() -> re.Pattern[str]:
    """One pattern matching every name some family reports."""
    return regexes.compile("|".join(f"(?:{p.regex})" for f in FAMILIES for p in f.patterns))


_COMPILED = tuple(tuple((regexes.compile(p.regex), p) for p in f.patterns) for f in FAMILIES)


@lru_cache(maxsize=None)  # names come from the mapping tables, so the cache stays bounded
def _family_patterns(name: str) -> tuple[Pattern | None, ...] | None:
    """Per family (in FAMILIES order), its first pattern that full-matches `name`, or None when
    no family's pattern matches at all: told by one match of them all, in C, for most names
    (each process asks for every table name its files hold)."""
    if name_pattern().fullmatch(name) is None:
        return None
    found = tuple(next((pat for regex, pat in patterns if regex.fullmatch(name)), None)
                  for patterns in _COMPILED)
    return found if any(found) else None


def _may_concern_a_family(mappings, name: str, entry) -> bool:
    return _family_patterns(name) is not None or entry.risk == "library-semantics"


def _family_hits(ctx) -> dict[str, list[Hit]]:
    """Every family's hits, by rule code, from one pass over the file's table names (each family
    rule reads its own list)."""
    return sx.memo(ctx, "library_semantics.hits", _compute_family_hits)


def _compute_family_hits(ctx) -> dict[str, list[Hit]]:
    out: dict[str, list[Hit]] = {f.code: [] for f in FAMILIES}
    for start, end, name, entry in table_name_uses(ctx, _may_concern_a_family):
        matched = _family_patterns(name)
        risky = entry.risk == "library-semantics"  # or matched: _may_concern_a_family chose it
        if ctx.mappings.unsupported_reason(name):
            continue  # does not map here: unsupported-api reports it
        for i, family in enumerate(FAMILIES):
            pat = matched[i] if matched is not None else None
            if pat is not None:
                out[family.code].append(
                    Hit(start, end, f"{family.library}: `{name}`: {pat.message}",
                        pat.suggestion, pat.severity))
            elif risky and _claims(family, entry.library):
                target = ctx.mappings.names.get(name, name)
                label = family.library if "*" not in family.risk_libraries else \
                    _CATCH_ALL_LABELS.get(entry.library, f"{entry.library} -> ROCm")
                out[family.code].append(
                    Hit(start, end,
                        f"{label}: `{name}` maps to `{target}`, but behaves "
                        f"differently: {entry.note.strip() or 'see the mapping tables'}",
                        "check the ROCm library's documentation for this API and test the "
                        "ported path"))
    return out


_CATCH_ALL_LABELS = {"nccl": "NCCL -> RCCL", "runtime": "CUDA runtime -> HIP",
                     "driver": "CUDA driver -> HIP", "cusolver": "cuSOLVER -> hipSOLVER"}


def _claims(family: Family, library: str) -> bool:
    if library in family.risk_libraries:
        return True
    return "*" in family.risk_libraries and not any(
        library in f.risk_libraries for f in FAMILIES)


def _register(family: Family) -> None:
    def check(ctx):
        return _family_hits(ctx)[family.code]

    check.__name__ = family.name.replace("-", "_")
    check.__doc__ = family.doc
    rule(code=family.code, name=family.name, category="library-semantics",
         severity=family.severity, effort=family.effort)(check)


for _family in FAMILIES:
    _register(_family)
