"""camclass_export — camclass's model tools, one package: the exporter (PyTorch or ONNX -> a
camclass bundle, docs/MODEL_FORMAT.md) and the ImageNet fetch tool.

    export          the exporter's command line and export_module() (camclass-export)
    ccm_lower       torch.fx graph -> bundle ops
    ccm_onnx        ONNX graph -> bundle ops (--onnx)
    ccm_graph       the graph every front end builds, and its passes (BN folding, fusion);
                    no PyTorch
    ccm_write       a graph -> the bundle file (manifest, weights, labels); no PyTorch
    mobilenet_v2_builder  torchvision's mobilenet_v2 state_dict -> a bundle, no PyTorch
                    (camclass-fetch-imagenet)
    ccm_torchquant  PyTorch's eager-mode quantized models (--model quantization.NAME)
    ccm_calibrate   activation ranges on calibration images (--quantize int8 --calibrate)
    preprocess      camclass's preprocessing (docs/PREPROCESSING.md), the one Python reference
    ccm_format      the bundle format's constants and read_bundle; no PyTorch
    ccm_bundle      the bundle format in Python: read a bundle, run its graph in float64
    imagenet_classes.txt  the 1000 ImageNet category names (torchvision's)
    checkpoint      a .pth (torch.save's state_dict) read with the standard library
    fetch_imagenet  torchvision's ImageNet mobilenet_v2 -> mobilenet_v2-imagenet.ccm
    launch          how each command starts: a missing package is one line naming it, exit 2

The commands: tools/camclass-export and tools/camclass-fetch-imagenet in the source tree;
camclass-export and camclass-fetch-imagenet installed (python/installed_tool.py.in), with this
package in <datadir>/camclass/python; `python3 -m camclass_export` is the exporter too. Tests
import it with python/ on PYTHONPATH (tests/meson.build).
"""
