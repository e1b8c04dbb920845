"""Where an embedding model's transformer runs: PyTorch, ONNX Runtime or OpenVINO."""
