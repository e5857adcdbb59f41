"""The import-first file (`--import tests/zoo/preload.py`) for zoo programs whose output types live in a model's
module (`transformers.models.clip.modeling_clip.CLIPOutput`): on this CPU torch that module imports only after the
torchvision schema shim, so a job that imports it by itself reports the type as unregistered and says to name such a
file, as a user would."""
from tests.zoo.torchvision_shim import import_model_libraries

import_model_libraries()
