"""A PyTorch checkpoint (.pth: torch.save of a state_dict) read with the standard library.

    read(path) -> {name: tensor}   (numpy arrays when numpy is there, else Tensor objects)

torch.save writes a zip archive (PyTorch 1.6 and later: <name>/data.pkl, the pickle, and
<name>/data/<key>, each storage's raw bytes) or, before that and still with
_use_new_zipfile_serialization=False, the legacy stream (pickles of a magic number, a protocol
version and the system's byte order, the object's pickle, the list of storage keys, then each
storage as an 8-byte element count and its bytes) — torchvision's published ImageNet weights
are of that kind. Both carry the tensors as calls of torch._utils._rebuild_tensor_v2 on
storages that the pickle names by persistent id.

The pickle is read by a restricted unpickler: it resolves only OrderedDict, the tensor and
parameter rebuild functions and the storage types, each mapped to a function or marker of
this module, so that no other code of the file runs and PyTorch is never imported. Anything
else the pickle names is CheckpointError naming it. Tensors are rebuilt from their storage,
offset, shape and strides (views and non-contiguous tensors included) into C order.
"""

import array
import collections
import io
import pickle
import struct
import sys
import zipfile

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C  # torch/serialization.py's MAGIC_NUMBER
LEGACY_PROTOCOL = 1001
# PyTorch's storage types: (struct format of one element, its size in bytes).
STORAGE_FORMATS = {
    "FloatStorage": ("f", 4), "DoubleStorage": ("d", 8), "HalfStorage": ("e", 2),
    "LongStorage": ("q", 8), "IntStorage": ("i", 4), "ShortStorage": ("h", 2),
    "CharStorage": ("b", 1), "ByteStorage": ("B", 1), "BoolStorage": ("?", 1),
}
# What array.array holds each format as ("e", half, and "?" have no array typecode).
ARRAY_TYPECODES = {"f": "f", "d": "d", "e": "f", "q": "q", "i": "i", "h": "h", "b": "b",
                   "B": "B", "?": "B"}
MAX_ELEMENTS = 1 << 31  # one tensor; a mobilenet_v2 has 3.5 M parameters in all


class CheckpointError(Exception):
    """One line for the user: why the file is not a checkpoint this module reads."""


class Tensor:
    """A tensor without numpy: shape (tuple), format (struct's: "f" float32, "q" int64, ...)
    and values (array.array, C order; float16 as float32, bool as bytes)."""

    def __init__(self, shape, fmt, values):
        self.shape, self.format, self.values = tuple(shape), fmt, values

    def tolist(self):
        """The values nested as the shape says (a scalar for shape ())."""
        def nest(flat, shape):
            if not shape:
                return flat[0]
            n = len(flat) // shape[0] if shape[0] else 0
            return [nest(flat[i * n:(i + 1) * n], shape[1:]) for i in range(shape[0])]
        return nest(list(self.values), self.shape)


class _StorageType:
    """What the pickle's torch.<X>Storage resolves to."""

    def __init__(self, name):
        self.name = name
        self.format, self.itemsize = STORAGE_FORMATS[name]


class _Storage:
    """One storage: its type, element count and, once read, its bytes (little-endian)."""

    def __init__(self, stype, numel):
        self.type, self.numel, self.data = stype, numel, None


class _StorageView:
    """A legacy view into a root storage: (root, element offset, element count)."""

    def __init__(self, root, offset, numel):
        self.root, self.offset, self.numel = root, offset, numel


class _PendingTensor:
    """A tensor named by the pickle, rebuilt once every storage's bytes are read."""

    def __init__(self, storage, offset, size, stride):
        self.storage, self.offset = storage, offset
        self.size, self.stride = tuple(size), tuple(stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    return _PendingTensor(storage, storage_offset, size, stride)


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _PendingTensor(storage, storage_offset, size, stride)


def _rebuild_parameter(data, requires_grad=False, backward_hooks=None):
    return data


ALLOWED = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
}


class _Unpickler(pickle.Unpickler):
    """Resolves ALLOWED and torch's storage types, nothing else; persistent ids go to
    persistent(saved_id)."""

    def __init__(self, data, persistent):
        super().__init__(io.BytesIO(data) if isinstance(data, bytes) else data)
        self._persistent = persistent

    def find_class(self, module, name):
        if (module, name) in ALLOWED:
            return ALLOWED[(module, name)]
        if module == "torch" and name in STORAGE_FORMATS:
            return _StorageType(name)
        raise CheckpointError("the pickle names %s.%s, which is not part of a state_dict of "
                              "tensors; refused (nothing of the file was run)" % (module, name))

    def persistent_load(self, saved_id):
        if not isinstance(saved_id, tuple) or not saved_id:
            raise CheckpointError("a persistent id %r that is not a storage" % (saved_id,))
        kind = saved_id[0].decode("ascii") if isinstance(saved_id[0], bytes) else saved_id[0]
        if kind != "storage" or not isinstance(saved_id[1], _StorageType):
            raise CheckpointError("a persistent id of kind %r; only storages are read" % kind)
        return self._persistent(saved_id[1:])


def _unpickle(data, persistent=None):
    def refuse(saved_id):
        raise CheckpointError("a storage where none belongs")
    try:
        return _Unpickler(data, persistent or refuse).load()
    except CheckpointError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError,
            IndexError, KeyError, struct.error) as e:
        raise CheckpointError("not a pickle PyTorch wrote (%s: %s)" % (type(e).__name__, e))


def _numel(n, what):
    if not isinstance(n, int) or not 0 <= n <= MAX_ELEMENTS:
        raise CheckpointError("%s: element count %r out of range" % (what, n))
    return n


def _load_zip(z):
    pkl = [n for n in z.namelist() if n.endswith("/data.pkl") and n.count("/") == 1]
    if len(pkl) != 1:
        raise CheckpointError("a zip archive without one <name>/data.pkl: not a torch.save file")
    prefix = pkl[0][:-len("data.pkl")]
    if z.NameToInfo.get(prefix + "byteorder") is not None:
        if z.read(prefix + "byteorder").strip() not in (b"little", b""):
            raise CheckpointError("a big-endian checkpoint; only little-endian ones are read")
    storages = {}

    def persistent(data):
        stype, key, _location, numel = data
        key = str(key)
        if key not in storages:
            st = _Storage(stype, _numel(numel, "storage " + key))
            try:
                st.data = z.read(prefix + "data/" + key)
            except KeyError:
                raise CheckpointError("storage %s is missing from the archive" % key)
            storages[key] = st
        return storages[key]

    return _unpickle(z.read(pkl[0]), persistent)


def _load_legacy(f):
    if _unpickle(f) != LEGACY_MAGIC:
        raise CheckpointError("neither a zip archive nor PyTorch's legacy format (no magic "
                              "number)")
    if _unpickle(f) != LEGACY_PROTOCOL:
        raise CheckpointError("PyTorch's legacy format of an unknown protocol version")
    info = _unpickle(f)
    if not isinstance(info, dict) or info.get("little_endian", True) is not True:
        raise CheckpointError("a big-endian checkpoint; only little-endian ones are read")
    roots = {}

    def persistent(data):
        stype, root_key, _location, numel, view = data
        root = roots.setdefault(str(root_key), _Storage(stype, _numel(numel, "storage")))
        if view is None:
            return root
        _key, offset, size = view
        return _StorageView(root, _numel(offset, "view offset"), _numel(size, "view"))

    result = _unpickle(f, persistent)
    keys = _unpickle(f)
    for key in keys if isinstance(keys, list) else ():
        st = roots.get(str(key))
        if st is None:
            raise CheckpointError("storage %s is listed but never used" % key)
        head = f.read(8)
        n = struct.unpack("<q", head)[0] if len(head) == 8 else -1
        if n != st.numel:
            raise CheckpointError("storage %s: %d elements where the pickle says %d: damaged or "
                                  "truncated file" % (key, n, st.numel))
        st.data = f.read(n * st.type.itemsize)
    return result


def _values(st, fmt):
    """A storage's bytes as array.array of ARRAY_TYPECODES[fmt]."""
    code = ARRAY_TYPECODES[fmt]
    if fmt in ("e", "?"):
        out = array.array(code, struct.unpack("<%d%s" % (len(st.data) // struct.calcsize(fmt),
                                                         fmt), st.data))
    else:
        out = array.array(code)
        out.frombytes(st.data)
        if sys.byteorder == "big":
            out.byteswap()
    return out


def _materialize(t, np):
    storage, offset = t.storage, t.offset
    if isinstance(storage, _StorageView):
        storage, offset = storage.root, storage.offset + offset
    if not isinstance(storage, _Storage) or storage.data is None:
        raise CheckpointError("a tensor whose storage was never read")
    fmt = storage.type.format
    if len(storage.data) != storage.numel * storage.type.itemsize:
        raise CheckpointError("a %s of %d bytes for %d elements: damaged or truncated file"
                              % (storage.type.name, len(storage.data), storage.numel))
    if len(t.size) != len(t.stride) or any(s < 0 for s in t.size + t.stride) or offset < 0:
        raise CheckpointError("a tensor of shape %s, strides %s" % (t.size, t.stride))
    last = offset + sum((n - 1) * s for n, s in zip(t.size, t.stride)) if all(t.size) else -1
    if last >= storage.numel:
        raise CheckpointError("a tensor of shape %s reaches past its storage of %d elements"
                              % (t.size, storage.numel))
    flat = _values(storage, fmt)
    if np is not None:
        base = np.frombuffer(flat, dtype=np.dtype(flat.typecode))
        dtype = {"e": np.float16, "?": np.bool_}.get(fmt, base.dtype)
        if not all(t.size):
            return np.zeros(t.size, dtype)
        view = np.lib.stride_tricks.as_strided(base[offset:], t.size,
                                               [s * base.itemsize for s in t.stride])
        return np.array(view, dtype=dtype)
    return Tensor(t.size, fmt, _gather(flat, offset, t.size, t.stride))


def _gather(flat, offset, size, stride):
    """flat's elements of the tensor (offset, size, stride) in C order, as an array.array."""
    n = 1
    for s in size:
        n *= s
    contiguous, step = [], 1
    for s in reversed(size):
        contiguous.insert(0, step)
        step *= s
    if n == 0:
        return array.array(flat.typecode)
    if all(a == b for a, b, s in zip(stride, contiguous, size) if s > 1):
        return flat[offset:offset + n]
    out = array.array(flat.typecode, [flat[0]]) * n
    index = [0] * len(size)
    for i in range(n):
        out[i] = flat[offset + sum(a * b for a, b in zip(index, stride))]
        for d in range(len(size) - 1, -1, -1):  # the next index, last dimension fastest
            index[d] += 1
            if index[d] < size[d]:
                break
            index[d] = 0
    return out


def _rebuild(obj, np):
    """obj with every pending tensor rebuilt (dicts, lists and tuples walked)."""
    if isinstance(obj, _PendingTensor):
        return _materialize(obj, np)
    if isinstance(obj, dict):
        out = type(obj)() if isinstance(obj, collections.OrderedDict) else {}
        for k, v in obj.items():
            out[k] = _rebuild(v, np)
        return out
    if isinstance(obj, (list, tuple)):
        return type(obj)(_rebuild(v, np) for v in obj)
    return obj


def read(path, use_numpy=None):
    """The object torch.save wrote to path (a state_dict: {name: tensor}), its tensors as
    numpy arrays (use_numpy None: when numpy imports; True: always) or Tensor objects
    (False). Raises CheckpointError (one line) or OSError."""
    np = None
    if use_numpy is not False:
        try:
            import numpy as np
        except ImportError:
            if use_numpy:
                raise
    with open(path, "rb") as f:
        head = f.read(4)
        f.seek(0)
        if head.startswith(b"PK"):
            try:
                with zipfile.ZipFile(f) as z:
                    obj = _load_zip(z)
            except zipfile.BadZipFile as e:
                raise CheckpointError("a damaged zip archive (%s)" % e)
        else:
            obj = _load_legacy(f)
    return _rebuild(obj, np)
