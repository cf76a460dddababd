"""The plate detector: its settings and passes (`detector`), its ONNX export on OpenVINO or ONNX Runtime on the CPU
(`onnx_detector`, `openvino_session`) and its PyTorch weights on a CPU or GPU (`torch_detector`)."""
