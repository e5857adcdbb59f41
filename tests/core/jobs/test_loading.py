"""core/jobs/loading.py: a trusted program whose pytree type lives in an installed module that fails to import (as
transformers' CLIP module does on a CPU build of torch without torchvision's ops) is refused with that module's own
error in the message, not only "types not registered"; programs that name modules of the allowed libraries (Mamba's
output type, DeepSeek's transformers:: ops, PT2E's quantized_decomposed::, torchao's int8 weights, a HuggingFace
model's outputs, and the second zoo's BART, DistilBERT, Gemma and Qwen2) run, decompose and get a numerics comparison
with no flag.

Each zoo program's three jobs run in one warm worker (core/jobs/warm.py): the first job's fresh process imports the
module itself and says so in its `imports` (the program's import decision); decompose and numerics then reuse the
loaded program. That the command line's run, decompose and numerics each import the module in a fresh process and
report it is proved once, on the HuggingFace program (the CLI prints the job's result as JSON)."""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from pt2_viewer.core.jobs.client import run_job
from pt2_viewer.core.jobs.errors import JobFailure
from pt2_viewer.core.jobs.loading import load_program
from pt2_viewer.core.jobs.spec import JobSpec
from pt2_viewer.core.jobs.warm import WarmPool
from tests import hostile_archives as hostile
from tests.programs import pt2_path  # noqa: F401  (pt2_path is a fixture)


def test_a_module_that_fails_to_import_is_named_with_its_error(pt2_path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    payload = hostile.Payload.make(tmp_path)
    (payload.path / f"{payload.module}.py").write_text(
        'raise RuntimeError("operator torchvision::nms does not exist")\n', encoding="utf-8")
    path = hostile.build("pytree_type", pt2_path("dynamic_shapes"), tmp_path / "archives", payload)
    monkeypatch.syspath_prepend(str(payload.path))
    with pytest.raises(JobFailure) as failure:
        load_program(path, trusted=True)
    assert failure.value.failure.kind == "missing_type"
    assert (f"'{payload.module}' is installed but failed to import (RuntimeError: operator torchvision::nms does "
            "not exist)") in failure.value.failure.message


# --- programs that name their own libraries: no flag, no prompt (core/jobs/import_policy.py) ----------------------

NO_FLAG = {  # zoo program -> a module the import policy must import for it, from an allowed distribution
    "mamba": ("transformers.models.mamba.modeling_mamba", "transformers"),
    "deepseek_moe": ("transformers.integrations.moe", "transformers"),
    "pt2e_cnn": ("torch.ao.quantization.fx._decomposed", "torch"),
    "torchao_int8": ("torchao.quantization", "torchao"),
}


@pytest.fixture
def working_torchvision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine's torchvision wheel is built for a CUDA torch and does not import on the CPU one, and every
    `transformers.models.*` module imports it; a user's matching torchvision imports. The zoo's shim stands in for
    one: here, and in the workers through a `sitecustomize` (PYTHONPATH is the user's own, not the file's)."""
    from tests.programs import REPO_ROOT
    from tests.zoo.torchvision_shim import install

    install()
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(
        f"import sys\nsys.path.append({str(REPO_ROOT)!r})\nfrom tests.zoo.torchvision_shim import install\n"
        "install()\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(shim), os.environ.get("PYTHONPATH")])))


def _jobs(pool: WarmPool, path: str, work: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    """run_program, decompose --to core and numerics --candidate core on `path`, one after another in the pool's
    warm worker for it (the first job starts it: a fresh process), as `pt2-viewer run/decompose/numerics --json`
    ask them; each job's result."""
    requests = {"run_program": {"program": path, "runs": 1, "warmup": 0},
                "decompose": {"program": path, "to": "core", "output": str(work / "core.pt2")},
                "numerics": {"program": path, "candidate": "core"}}
    results = {}
    for job, request in requests.items():
        started = pool.job(JobSpec(job, request, work / job, timeout_s=600))
        started.start()
        outcome = started.wait()
        assert outcome.result is not None, (job, outcome.message, outcome.error_traceback)
        results[job] = outcome.result
    return results


@pytest.mark.parametrize("program_id", sorted(NO_FLAG))
def test_programs_naming_their_libraries_run_decompose_and_compare_with_no_flag(
        program_id: str, tmp_path: Path, working_torchvision: None, warm_pool: WarmPool,
        zoo_program: Callable[[str], Path]) -> None:
    path = str(zoo_program(program_id))
    module, distribution = NO_FLAG[program_id]
    results = _jobs(warm_pool, path, tmp_path)  # a fresh worker: it imports the module itself, and says so
    result = results["run_program"]
    assert result.get("ok"), result.get("error")
    details = {d["module"]: d for d in result["imports"]}
    assert details[module]["distribution"] == distribution and details[module]["status"] == "allowed"
    assert details[module]["version"] and details[module]["reason"].startswith("for ")
    assert sum(line.startswith(f"imported {module} ({distribution} ") for line in result["log"]) == 1

    decomposed = results["decompose"]
    assert decomposed["ok"], decomposed.get("error")
    numerics = results["numerics"]
    assert numerics["ok"], numerics.get("error")
    assert numerics["per_node"], "numerics compared no node"


def test_a_huggingface_program_runs_decomposes_and_compares_from_the_command_line_with_no_flag(
        pt2_path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """In fresh processes, as a user types them: each command imports the output type's module itself."""
    import subprocess
    import sys

    import transformers

    from tests.programs import REPO_ROOT

    path = str(pt2_path("hf_tiny_bert"))
    expected = {"module": "transformers.modeling_outputs", "distribution": "transformers",
                "version": transformers.__version__, "reason": "for BaseModelOutputWithPoolingAndCrossAttentions",
                "status": "allowed"}
    for argv in (["run", path, "--runs", "1", "--warmup", "0"],
                 ["decompose", path, "--to", "core", "-o", str(tmp_path / "core.pt2")],
                 ["numerics", path, "--candidate", "core"]):
        done = subprocess.run([sys.executable, "-m", "pt2_viewer", *argv, "--json", "-q"], cwd=tmp_path,
                              env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO_ROOT)},
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (argv[0], done.stderr[-2000:])
        result = json.loads(done.stdout)
        assert result["ok"] and result["imports"] == [expected], (argv[0], result.get("imports"))


# --- the second zoo (tests/zoo/second_zoo.py): architectures nobody here wrote, as a new user brings them ---------

SECOND_ZOO = {  # program -> its output type (in transformers.modeling_outputs) and the shape of its first output
    "bart": ("Seq2SeqLMOutput", [1, 8, 1000]),
    "distilbert": ("SequenceClassifierOutput", [2, 3]),
    "gemma": ("CausalLMOutputWithPast", [1, 16, 1000]),
    "qwen2": ("CausalLMOutputWithPast", [1, 16, 1000]),
}


@pytest.mark.parametrize("program_id", sorted(SECOND_ZOO))
def test_the_second_zoo_runs_decomposes_and_compares_with_no_flag(program_id: str, tmp_path: Path,
                                                                  warm_pool: WarmPool,
                                                                  zoo_program: Callable[[str], Path]) -> None:
    """BART, DistilBERT, Gemma and Qwen2, which issue 20 found refused without --trust: in a fresh worker the first
    job imports its output type's module by itself and says so; decompose and numerics then run in the same worker.
    No torchvision shim: `transformers.modeling_outputs` imports as this machine has it."""
    import transformers

    path = str(zoo_program(program_id))
    output_type, first_shape = SECOND_ZOO[program_id]
    expected = [{"module": "transformers.modeling_outputs", "distribution": "transformers",
                 "version": transformers.__version__, "reason": f"for {output_type}", "status": "allowed"}]

    results = _jobs(warm_pool, path, tmp_path)
    result = results["run_program"]
    assert result.get("ok"), result.get("error")
    assert result["imports"] == expected
    assert result["outputs"][0]["shape"] == first_shape
    assert sum(line.startswith("imported transformers.modeling_outputs (transformers ") for line in result["log"]) == 1

    # decompose and numerics reuse the worker's loaded program, so they import nothing more (`imports` lists what a
    # job imported); the first job here shows this program's module is allowed.
    out = tmp_path / "core.pt2"
    decomposed = results["decompose"]
    assert decomposed["ok"], decomposed.get("error")
    assert out.is_file() and decomposed["nodes_after"] > 0
    numerics = results["numerics"]
    assert numerics["ok"], numerics.get("error")
    assert numerics["per_node"], "numerics compared no node"
    # each job kind, alone in a fresh worker as the command line starts it, imports the module itself and says so
    for job, request in (("decompose", {"program": path, "to": "core", "output": str(tmp_path / "fresh.pt2")}),
                         ("numerics", {"program": path, "candidate": "core"})):
        _, fresh = run_job(job, request, tmp_path / f"fresh-{job}", timeout_s=600)
        assert fresh.result is not None and fresh.result["ok"], (job, fresh.message)
        assert fresh.result["imports"] == expected, (job, fresh.result.get("imports"))
