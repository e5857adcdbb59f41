"""ONNX models (`.onnx`), read without torch and without running anything: the protobuf is read by the `onnx`
package, never its external data; the graph becomes the viewer's `Program` (program_map.py), each node keeping what
torch's exporter recorded about the FX node it came from (provenance.py). `onnx` (and the numpy it imports) is
imported only when a `.onnx` is opened."""
