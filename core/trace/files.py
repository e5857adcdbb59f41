"""What a torch.compile trace's files look like: the names torch gives a `TORCH_TRACE` folder's logs, and how a log
starts. The format registry recognises a trace with this alone, so that recognising one (on every open) does not
import the trace's reader and model, which only opening one needs."""
from __future__ import annotations

import re

LOG_GLOB = "dedicated_log_torch_trace*.log"  # one per process: `dedicated_log_torch_trace_rank_N_*.log` under torchrun
# A structured-log record's glog prefix: `V1203 10:11:12.123456 4242 ` (a rank's `[rank1]:` before it)
FIRST_RECORD = re.compile(rb"(?:\[rank\d+\]:)?[VIWEC]\d{4} \d{2}:\d{2}:\d{2}\.\d{6} +\d+ ")


def looks_like_trace_log(head: bytes) -> bool:
    """Whether a file's first bytes start a structured-log record (the format registry's test for a trace log)."""
    return FIRST_RECORD.match(head) is not None
