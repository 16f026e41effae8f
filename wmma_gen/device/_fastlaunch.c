/* wmma_gen.device._fastlaunch: the repeat-call launch of a prepacked kernel in C (issue 36).
 *
 * A Launcher holds what device/template.py packed once per operand layout -- the kernarg
 * segment, the byte offsets of its pointer arguments -- plus the function handle, grid, block,
 * the device's own stream and the address of hipModuleLaunchKernel in the HIP library
 * hip-python loaded (device/native.py finds it with dlsym through ctypes). A call patches
 * the new addresses into the Launcher's own kernarg buffer and calls hipModuleLaunchKernel
 * with the `extra` form of the kernel arguments:
 *     {HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END}
 * (markers (void*)1, 2, 3 in hip_runtime_api.h). HIP copies the kernarg buffer when the launch
 * is enqueued (a stream capture copies it into the graph node), so the next call may overwrite
 * it; the GIL is held throughout, so two threads never patch one buffer at once.
 *
 *     Launcher(launch_addr, fn, grid, block, segment, offsets, stream, on_error)
 *     launcher(pointers, stream=None)     pointers: one address per offset (int, None = 0, or an
 *                                         object with data_ptr(), e.g. a torch tensor)
 *     shape_key(head, tensors)            the torch lane's call-site key (torch/replay.py's twin)
 *     lookup(entries, head, tensors[, stream, env])   (key, entries.get(key), outputs of run or None):
 *                                         the addresses and device the key read are the hit's
 *     run(entry, tensors, device, stream, env)   a call-site cache hit: outputs allocated (torch's
 *                                         low-overhead allocator when recorded, or a kept buffer), fire
 *     fire(plan, values, stream)          plan: ((launcher, indices), ...); launcher k gets
 *                                         values[i] for i in its indices. A launcher that is not
 *                                         a Launcher (the emulator's Python closure) is called
 *                                         with a tuple of ints.
 * A failed launch calls on_error(code), which raises (HipDevice: DeviceError naming the call).
 * The pure-Python twin is HipDevice.prepack's closure (device/hip.py), used without this module.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef int (*launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                         unsigned shared, void *stream, void **params, void **extra);

typedef struct {
    PyObject_HEAD
    launch_fn call;
    void *fn;
    unsigned grid[3], block[3];
    void *stream;
    char *buf;
    size_t size;
    void *extra[5];
    Py_ssize_t nptr;
    Py_ssize_t *offsets;
    PyObject *on_error;
} Launcher;

static PyTypeObject LauncherType;
static PyObject *get_device_name, *gen_name, *scratch_name, *device_name, *requires_grad_name, *data_ptr_name, *shape_name, *stride_name, *dtype_name;

/* An address from an int, None (0) or an object with data_ptr(); -1 with an exception set. */
static int as_addr(PyObject *o, uint64_t *out) {
    if (o == Py_None) { *out = 0; return 0; }
    if (PyLong_Check(o)) {
        *out = (uint64_t)PyLong_AsUnsignedLongLongMask(o);
        return (*out == (uint64_t)-1 && PyErr_Occurred()) ? -1 : 0;
    }
    PyObject *p = PyObject_CallMethodNoArgs(o, data_ptr_name);
    if (p == NULL) return -1;
    *out = (uint64_t)PyLong_AsUnsignedLongLongMask(p);
    Py_DECREF(p);
    return (*out == (uint64_t)-1 && PyErr_Occurred()) ? -1 : 0;
}

static int as_stream(Launcher *self, PyObject *s, void **out) {
    if (s == NULL || s == Py_None) { *out = self->stream; return 0; }
    PyObject *n = PyLong_Check(s) ? (Py_INCREF(s), s) : PyNumber_Long(s);   /* hip-python handles: int() */
    if (n == NULL) return -1;
    uint64_t v = (uint64_t)PyLong_AsUnsignedLongLongMask(n);
    Py_DECREF(n);
    if (v == (uint64_t)-1 && PyErr_Occurred()) return -1;
    *out = (void *)(uintptr_t)v;
    return 0;
}

static int put(Launcher *self, Py_ssize_t i, PyObject *value) {
    uint64_t a;
    if (as_addr(value, &a) < 0) return -1;
    memcpy(self->buf + self->offsets[i], &a, 8);
    return 0;
}

static PyObject *go(Launcher *self, void *stream) {
    int err = self->call(self->fn, self->grid[0], self->grid[1], self->grid[2], self->block[0], self->block[1],
                         self->block[2], 0, stream, NULL, self->extra);
    if (err != 0) {
        PyObject *r = PyObject_CallFunction(self->on_error, "i", err);
        if (r == NULL) return NULL;
        Py_DECREF(r);
        PyErr_Format(PyExc_RuntimeError, "hipModuleLaunchKernel failed: hipError_t %d", err);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *Launcher_call(Launcher *self, PyObject *args, PyObject *kwargs) {
    static char *kw[] = {"pointers", "stream", NULL};
    PyObject *pointers, *s = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O", kw, &pointers, &s)) return NULL;
    PyObject *seq = PySequence_Fast(pointers, "pointers must be a sequence of addresses");
    if (seq == NULL) return NULL;
    if (PySequence_Fast_GET_SIZE(seq) != self->nptr) {
        PyErr_Format(PyExc_ValueError, "pointers has %zd addresses: this kernel takes %zd",
                     PySequence_Fast_GET_SIZE(seq), self->nptr);
        Py_DECREF(seq);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < self->nptr; i++)
        if (put(self, i, PySequence_Fast_GET_ITEM(seq, i)) < 0) { Py_DECREF(seq); return NULL; }
    Py_DECREF(seq);
    void *stream;
    if (as_stream(self, s, &stream) < 0) return NULL;
    return go(self, stream);
}

static int dims(PyObject *t, unsigned out[3], const char *name) {
    if (!PyArg_ParseTuple(t, "III", &out[0], &out[1], &out[2])) {
        PyErr_Format(PyExc_ValueError, "%s must be 3 unsigned ints", name);
        return -1;
    }
    return 0;
}

static int Launcher_init(Launcher *self, PyObject *args, PyObject *kwargs) {
    unsigned long long call, fn, stream;
    PyObject *grid, *block, *offsets, *on_error;
    Py_buffer seg;
    if (!PyArg_ParseTuple(args, "KKOOy*OKO", &call, &fn, &grid, &block, &seg, &offsets, &stream, &on_error))
        return -1;
    int bad = dims(grid, self->grid, "grid") < 0 || dims(block, self->block, "block") < 0;
    PyObject *offs = bad ? NULL : PySequence_Fast(offsets, "offsets must be a sequence of ints");
    if (offs == NULL) { PyBuffer_Release(&seg); return -1; }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(offs);
    self->buf = PyMem_Malloc(seg.len > 0 ? (size_t)seg.len : 1);
    self->offsets = PyMem_Malloc(sizeof(Py_ssize_t) * (n > 0 ? (size_t)n : 1));
    if (self->buf == NULL || self->offsets == NULL) { Py_DECREF(offs); PyBuffer_Release(&seg); PyErr_NoMemory(); return -1; }
    memcpy(self->buf, seg.buf, (size_t)seg.len);
    self->size = (size_t)seg.len;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t off = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(offs, i));
        if (off < 0 || off + 8 > seg.len) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "pointer offset %zd is not allowed: 0..%zd for a %zd-byte segment",
                             off, seg.len - 8, seg.len);
            Py_DECREF(offs); PyBuffer_Release(&seg);
            return -1;
        }
        self->offsets[i] = off;
    }
    Py_DECREF(offs);
    PyBuffer_Release(&seg);
    self->nptr = n;
    self->call = (launch_fn)(uintptr_t)call;
    self->fn = (void *)(uintptr_t)fn;
    self->stream = (void *)(uintptr_t)stream;
    self->extra[0] = (void *)1; self->extra[1] = self->buf;
    self->extra[2] = (void *)2; self->extra[3] = &self->size;
    self->extra[4] = (void *)3;
    Py_INCREF(on_error);
    Py_XSETREF(self->on_error, on_error);
    return 0;
}

static void Launcher_dealloc(Launcher *self) {
    PyMem_Free(self->buf);
    PyMem_Free(self->offsets);
    Py_XDECREF(self->on_error);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *get_fn(Launcher *self, void *c) { return PyLong_FromVoidPtr(self->fn); }
static PyObject *get_grid(Launcher *self, void *c) { return Py_BuildValue("(III)", self->grid[0], self->grid[1], self->grid[2]); }
static PyObject *get_block(Launcher *self, void *c) { return Py_BuildValue("(III)", self->block[0], self->block[1], self->block[2]); }
static PyObject *get_kernarg(Launcher *self, void *c) { return PyBytes_FromStringAndSize(self->buf, (Py_ssize_t)self->size); }

static PyGetSetDef Launcher_getset[] = {
    {"fn", (getter)get_fn, NULL, "the hipFunction_t handle", NULL},
    {"grid", (getter)get_grid, NULL, "workgroups (x, y, z)", NULL},
    {"block", (getter)get_block, NULL, "threads per workgroup (x, y, z)", NULL},
    {"kernarg", (getter)get_kernarg, NULL, "a copy of the kernarg segment as last patched", NULL},
    {NULL},
};

static PyTypeObject LauncherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "wmma_gen.device._fastlaunch.Launcher",
    .tp_basicsize = sizeof(Launcher),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Launcher(launch_addr, fn, grid, block, segment, offsets, stream, on_error): see the module doc",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Launcher_init,
    .tp_dealloc = (destructor)Launcher_dealloc,
    .tp_call = (ternaryfunc)Launcher_call,
    .tp_getset = Launcher_getset,
};

/* fire_addrs: every launch of `plan` ((launcher, indices), ...) with addrs[i] for index i (nv addresses).
 * A Launcher is patched and launched in C; any other launcher (the emulator's Python closure) is called
 * with a tuple of ints. */
static PyObject *fire_addrs(PyObject *plan, const uint64_t *addrs, Py_ssize_t nv, PyObject *s) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(plan); k++) {
        PyObject *step = PyTuple_GET_ITEM(plan, k);
        if (!PyTuple_Check(step) || PyTuple_GET_SIZE(step) != 2 || !PyTuple_Check(PyTuple_GET_ITEM(step, 1))) {
            PyErr_SetString(PyExc_TypeError, "plan entries must be (launcher, indices tuple)");
            return NULL;
        }
        PyObject *launcher = PyTuple_GET_ITEM(step, 0), *idx = PyTuple_GET_ITEM(step, 1);
        Py_ssize_t n = PyTuple_GET_SIZE(idx);
        int native = Py_TYPE(launcher) == &LauncherType;
        if (native && n != ((Launcher *)launcher)->nptr) {
            PyErr_Format(PyExc_ValueError, "plan entry %zd has %zd indices: its kernel takes %zd", k, n,
                         ((Launcher *)launcher)->nptr);
            return NULL;
        }
        PyObject *ptrs = native ? NULL : PyTuple_New(n);        /* a Python launch closure: a tuple of ints */
        if (!native && ptrs == NULL) return NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_ssize_t j = PyLong_AsSsize_t(PyTuple_GET_ITEM(idx, i));
            if (j < 0 || j >= nv) {
                if (!PyErr_Occurred()) PyErr_Format(PyExc_IndexError, "value index %zd out of %zd", j, nv);
                Py_XDECREF(ptrs);
                return NULL;
            }
            if (native) {
                memcpy(((Launcher *)launcher)->buf + ((Launcher *)launcher)->offsets[i], &addrs[j], 8);
                continue;
            }
            PyObject *v = PyLong_FromUnsignedLongLong(addrs[j]);
            if (v == NULL) { Py_DECREF(ptrs); return NULL; }
            PyTuple_SET_ITEM(ptrs, i, v);
        }
        PyObject *r;
        if (native) {
            void *stream;
            if (as_stream((Launcher *)launcher, s, &stream) < 0) return NULL;
            r = go((Launcher *)launcher, stream);
        } else {
            r = PyObject_CallFunctionObjArgs(launcher, ptrs, s, NULL);
            Py_DECREF(ptrs);
        }
        if (r == NULL) return NULL;
        Py_DECREF(r);
    }
    Py_RETURN_TRUE;
}

#define MAX_VALUES 256

/* fire(plan, values, stream): every launch of a call shape with its addresses picked by index
 * (values: ints, None = 0, or objects with data_ptr()). */
static PyObject *fire(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "fire(plan: tuple, values: tuple, stream)");
        return NULL;
    }
    Py_ssize_t nv = PyTuple_GET_SIZE(args[1]);
    if (nv > MAX_VALUES) {
        PyErr_Format(PyExc_ValueError, "fire takes at most %d values, not %zd", MAX_VALUES, nv);
        return NULL;
    }
    uint64_t addrs[MAX_VALUES];
    for (Py_ssize_t i = 0; i < nv; i++)
        if (as_addr(PyTuple_GET_ITEM(args[1], i), &addrs[i]) < 0) return NULL;
    return fire_addrs(args[0], addrs, nv, args[2]);
}

/* shape_key(head, tensors): head + one bytes object holding, per tensor, its rank, shape, strides,
 * dtype (the dtype object's identity: torch dtypes are singletons), the hash of its torch.device (c10's
 * std::hash<Device>, type << 16 | index: distinct for distinct devices) and data_ptr() % 16 as int64s (rank -1 for a None tensor): wmma_gen/torch/replay.py's call-site key.
 * One bytes object hashes and compares as one memcmp. (device/native.py's Python twin builds a tuple
 * holding the same facts; a process uses one of the two throughout.) */
#define KEY_WORDS 1024

static int put_ints(PyObject *seq, int64_t *w, Py_ssize_t *at) {
    if (!PyTuple_Check(seq)) { PyErr_SetString(PyExc_TypeError, "shape / stride() must be tuples"); return -1; }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(seq); i++) {
        if (*at >= KEY_WORDS) { PyErr_SetString(PyExc_ValueError, "too many tensor dims for one key"); return -1; }
        long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(seq, i));
        if (v == -1 && PyErr_Occurred()) return -1;
        w[(*at)++] = v;
    }
    return 0;
}

/* The key of (head, tensors); each tensor's data_ptr() into addrs[i] (0 for None: at most MAX_VALUES
 * tensors) and a new reference to tensors[0]'s device into *dev0 when dev0 is not NULL. */
static PyObject *build_key(PyObject *head, PyObject *ts, uint64_t *addrs, PyObject **dev0) {
    int64_t w[KEY_WORDS];
    Py_ssize_t at = 0;
    if (PyTuple_GET_SIZE(ts) > MAX_VALUES) {
        PyErr_Format(PyExc_ValueError, "a key takes at most %d tensors", MAX_VALUES);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(ts); i++) {
        PyObject *t = PyTuple_GET_ITEM(ts, i);
        if (at + 8 > KEY_WORDS) { PyErr_SetString(PyExc_ValueError, "too many tensors for one key"); goto fail; }
        if (t == Py_None) { w[at++] = -1; addrs[i] = 0; continue; }
        PyObject *shape = PyObject_GetAttr(t, shape_name);
        if (shape == NULL) goto fail;
        w[at++] = PyTuple_Check(shape) ? PyTuple_GET_SIZE(shape) : -2;
        int bad = put_ints(shape, w, &at);
        Py_DECREF(shape);
        if (bad) goto fail;
        PyObject *stride = PyObject_CallMethodNoArgs(t, stride_name);
        if (stride == NULL) goto fail;
        bad = put_ints(stride, w, &at);
        Py_DECREF(stride);
        if (bad || at + 5 > KEY_WORDS) {
            if (!bad) PyErr_SetString(PyExc_ValueError, "too many tensor dims for one key");
            goto fail;
        }
        PyObject *dtype = PyObject_GetAttr(t, dtype_name);
        if (dtype == NULL) goto fail;
        w[at++] = (int64_t)(intptr_t)dtype;
        Py_DECREF(dtype);        /* a torch dtype outlives the process's tensors: its address is its identity */
        PyObject *device = PyObject_GetAttr(t, device_name);
        if (device == NULL) goto fail;
        /* torch.device's hash is std::hash<c10::Device>: (type << 16 | index), one value per device */
        Py_hash_t h = PyObject_Hash(device);
        if (i == 0 && dev0 != NULL) *dev0 = device;      /* the outputs' device (run) */
        else Py_DECREF(device);
        if (h == -1 && PyErr_Occurred()) goto fail;
        if (as_addr(t, &addrs[i]) < 0) goto fail;
        w[at++] = (int64_t)(addrs[i] & 15);
    }
    Py_ssize_t nh = PyTuple_GET_SIZE(head);
    PyObject *k = PyTuple_New(nh + 1);
    if (k == NULL) goto fail;
    for (Py_ssize_t i = 0; i < nh; i++) {
        PyObject *h = PyTuple_GET_ITEM(head, i);
        Py_INCREF(h);
        PyTuple_SET_ITEM(k, i, h);
    }
    PyObject *b = PyBytes_FromStringAndSize((const char *)w, (Py_ssize_t)(at * sizeof(int64_t)));
    if (b == NULL) { Py_DECREF(k); goto fail; }
    PyTuple_SET_ITEM(k, nh, b);
    return k;
fail:
    if (dev0 != NULL) Py_CLEAR(*dev0);
    return NULL;
}

static PyObject *shape_key(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "shape_key(head: tuple, tensors: tuple)");
        return NULL;
    }
    uint64_t addrs[MAX_VALUES];
    return build_key(args[0], args[1], addrs, NULL);
}

/* run(entry, tensors, device, stream, env) -> [outputs] or None
 * entry: (token, outs, plan, scratch, ...) as torch/replay.py records, each of outs a (shape, strides,
 * dtype) to allocate or a tensor to hand out as it is (a kept buffer: replay.py's record);
 * env: (gen [int], captures [int], empty_strided, held). None (nothing done) when the token is stale
 * (token.gen != gen[0]) or has scratch buffers: replay.py's Python path handles those.
 * run_addrs is run with the tensors' addresses already read (lookup's key read them). */
static PyObject *kw_dtype_device;

/* (shape, strides, dtype, fast, index): fast(shape, strides, dtype) when it gives a tensor on device
 * `index` (get_device(); torch's _empty_strided_cuda allocates on the current GPU, which may be
 * another), else NULL with no exception set: the caller allocates with empty_strided. */
static PyObject *fast_alloc(PyObject *o) {
    PyObject *args[3] = {PyTuple_GET_ITEM(o, 0), PyTuple_GET_ITEM(o, 1), PyTuple_GET_ITEM(o, 2)};
    PyObject *t = PyObject_Vectorcall(PyTuple_GET_ITEM(o, 3), args, 3, NULL);
    if (t == NULL) { PyErr_Clear(); return NULL; }
    PyObject *where = PyObject_CallMethodNoArgs(t, get_device_name);
    int same = where != NULL && PyObject_RichCompareBool(where, PyTuple_GET_ITEM(o, 4), Py_EQ) == 1;
    Py_XDECREF(where);
    if (!same) { PyErr_Clear(); Py_DECREF(t); return NULL; }
    return t;
}

static PyObject *run_addrs(PyObject *entry, PyObject *ts, PyObject *device, PyObject *stream, PyObject *env,
                           uint64_t *addrs) {
    PyObject *token = PyTuple_GET_ITEM(entry, 0), *outs = PyTuple_GET_ITEM(entry, 1), *plan = PyTuple_GET_ITEM(entry, 2);
    PyObject *gen = PyObject_GetAttr(token, gen_name);
    if (gen == NULL) return NULL;
    int same = PyObject_RichCompareBool(gen, PyList_GET_ITEM(PyTuple_GET_ITEM(env, 0), 0), Py_EQ);
    Py_DECREF(gen);
    if (same < 0) return NULL;
    PyObject *scratch = PyObject_GetAttr(token, scratch_name);
    if (scratch == NULL) return NULL;
    int has = PyObject_IsTrue(scratch);
    Py_DECREF(scratch);
    if (has < 0) return NULL;
    if (!same || has || !PyTuple_Check(outs) || !PyTuple_Check(plan)) Py_RETURN_NONE;
    Py_ssize_t nt = PyTuple_GET_SIZE(ts), no = PyTuple_GET_SIZE(outs);
    if (nt + no + 1 > MAX_VALUES) {
        PyErr_Format(PyExc_ValueError, "run takes at most %d tensors and outputs", MAX_VALUES - 1);
        return NULL;
    }
    PyObject *made = PyList_New(no);
    if (made == NULL) return NULL;
    PyObject *empty = PyTuple_GET_ITEM(env, 2);
    for (Py_ssize_t i = 0; i < no; i++) {
        PyObject *o = PyTuple_GET_ITEM(outs, i), *t;
        if (!PyTuple_Check(o)) {                  /* a kept buffer */
            Py_INCREF(o);
            t = o;
        } else if (PyTuple_GET_SIZE(o) != 3 && PyTuple_GET_SIZE(o) != 5) {
            PyErr_SetString(PyExc_TypeError, "outs entries must be (shape, strides, dtype[, fast, index]) or a tensor");
            goto fail;
        } else {
            t = PyTuple_GET_SIZE(o) == 5 ? fast_alloc(o) : NULL;
            if (t == NULL) {
                PyObject *call[4] = {PyTuple_GET_ITEM(o, 0), PyTuple_GET_ITEM(o, 1), PyTuple_GET_ITEM(o, 2), device};
                t = PyObject_Vectorcall(empty, call, 2, kw_dtype_device);
                if (t == NULL) goto fail;
            }
        }
        PyList_SET_ITEM(made, i, t);
        if (as_addr(t, &addrs[nt + i]) < 0) goto fail;
    }
    addrs[nt + no] = 0;
    PyObject *caps = PyList_GET_ITEM(PyTuple_GET_ITEM(env, 1), 0);
    int capturing = PyObject_IsTrue(caps);
    if (capturing < 0) goto fail;
    if (capturing) {          /* a graph capture: its replays write these (device/operand.py) */
        PyObject *values = PyTuple_New(nt + no);
        if (values == NULL) goto fail;
        for (Py_ssize_t i = 0; i < nt + no; i++) {
            PyObject *v = i < nt ? PyTuple_GET_ITEM(ts, i) : PyList_GET_ITEM(made, i - nt);
            Py_INCREF(v);
            PyTuple_SET_ITEM(values, i, v);
        }
        PyObject *r = PyObject_Call(PyTuple_GET_ITEM(env, 3), values, NULL);
        Py_DECREF(values);
        if (r == NULL) goto fail;
        Py_DECREF(r);
    }
    PyObject *r = fire_addrs(plan, addrs, nt + no + 1, stream);
    if (r == NULL) goto fail;
    Py_DECREF(r);
    return made;
fail:
    Py_DECREF(made);
    return NULL;
}

static int run_args_ok(PyObject *entry, PyObject *ts, PyObject *env) {
    return PyTuple_Check(entry) && PyTuple_GET_SIZE(entry) >= 4 && PyTuple_Check(ts) && PyTuple_Check(env)
        && PyTuple_GET_SIZE(env) == 4;
}

static PyObject *run(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !run_args_ok(args[0], args[1], args[4])) {
        PyErr_SetString(PyExc_TypeError, "run(entry: tuple of 4 or more, tensors: tuple, device, stream, env: 4-tuple)");
        return NULL;
    }
    Py_ssize_t nt = PyTuple_GET_SIZE(args[1]);
    if (nt > MAX_VALUES) {
        PyErr_Format(PyExc_ValueError, "run takes at most %d tensors", MAX_VALUES);
        return NULL;
    }
    uint64_t addrs[MAX_VALUES];
    for (Py_ssize_t i = 0; i < nt; i++)
        if (as_addr(PyTuple_GET_ITEM(args[1], i), &addrs[i]) < 0) return NULL;
    return run_addrs(args[0], args[1], args[2], args[3], args[4], addrs);
}

/* lookup(entries, head, tensors[, stream, env]) -> (key, entry or None, outputs or None): the call's key,
 * its entry and, with stream and env given and a recorded entry, the outputs of running it (run), with
 * the addresses and the device the key read. */
static PyObject *lookup(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if ((nargs != 3 && nargs != 5) || !PyDict_Check(args[0]) || !PyTuple_Check(args[1]) || !PyTuple_Check(args[2])
            || (nargs == 5 && (!PyTuple_Check(args[4]) || PyTuple_GET_SIZE(args[4]) != 4))) {
        PyErr_SetString(PyExc_TypeError, "lookup(entries: dict, head: tuple, tensors: tuple[, stream, env: 4-tuple])");
        return NULL;
    }
    uint64_t addrs[MAX_VALUES];
    PyObject *device = NULL;
    PyObject *k = build_key(args[1], args[2], addrs, &device);
    if (k == NULL) return NULL;
    PyObject *e = PyDict_GetItemWithError(args[0], k);
    if (e == NULL && PyErr_Occurred()) { Py_DECREF(k); Py_XDECREF(device); return NULL; }
    PyObject *made = NULL;
    if (nargs == 5 && e != NULL && run_args_ok(e, args[2], args[4])) {
        if (device == NULL) {
            PyErr_SetString(PyExc_TypeError, "lookup: the first tensor of a recorded key is None");
            Py_DECREF(k);
            return NULL;
        }
        Py_INCREF(e);            /* kept while run may call Python (held), which could drop it from entries */
        made = run_addrs(e, args[2], device, args[3], args[4], addrs);
        Py_DECREF(e);
        if (made == NULL) { Py_DECREF(k); Py_DECREF(device); return NULL; }
    }
    Py_XDECREF(device);
    PyObject *r = PyTuple_Pack(3, k, e ? e : Py_None, made ? made : Py_None);
    Py_DECREF(k);
    Py_XDECREF(made);
    return r;
}

/* eager_mode(checks, grad_enabled, tensor_types, *tensors) -> 0 | 1 | 2: torch/runtime.py's eager_mode
 * (its doc). 0 (DISPATCH) when any of `checks` (callables) returns true or a tensor's type is not exactly
 * one of tensor_types; 2 (AUTOGRAD) when grad_enabled() and a tensor requires grad; else 1 (STRAIGHT). */
static PyObject *eager_mode(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 3 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "eager_mode(checks: tuple, grad_enabled, tensor_types: tuple, *tensors)");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args[0]); i++) {
        PyObject *r = PyObject_CallNoArgs(PyTuple_GET_ITEM(args[0], i));
        if (r == NULL) return NULL;
        int on = r != Py_None && PyObject_IsTrue(r);
        Py_DECREF(r);
        if (on) return PyLong_FromLong(0);
    }
    PyObject *g = PyObject_CallNoArgs(args[1]);
    if (g == NULL) return NULL;
    int grad = PyObject_IsTrue(g), needs = 0;
    Py_DECREF(g);
    for (Py_ssize_t i = 3; i < nargs; i++) {
        PyObject *t = args[i];
        if (t == Py_None) continue;
        PyObject *tp = (PyObject *)Py_TYPE(t);
        int plain = 0;
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(args[2]); j++)
            plain |= tp == PyTuple_GET_ITEM(args[2], j);
        if (!plain) return PyLong_FromLong(0);
        if (grad && !needs) {
            PyObject *rg = PyObject_GetAttr(t, requires_grad_name);
            if (rg == NULL) return NULL;
            needs = rg == Py_True;
            Py_DECREF(rg);
        }
    }
    return PyLong_FromLong(needs ? 2 : 1);
}

/* bind_mode(checks, grad_enabled, tensor_types) -> mode(*tensors): eager_mode with its first three
 * arguments kept by the module (one call per op instead of a functools.partial around eager_mode). */
static PyObject *mode_args;        /* (checks, grad_enabled, tensor_types) */

static PyObject *mode(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *all[16];
    if (mode_args == NULL || nargs > 13) {
        PyErr_SetString(PyExc_TypeError, mode_args == NULL ? "mode: call bind_mode first" : "mode takes at most 13 tensors");
        return NULL;
    }
    for (int i = 0; i < 3; i++) all[i] = PyTuple_GET_ITEM(mode_args, i);
    for (Py_ssize_t i = 0; i < nargs; i++) all[3 + i] = args[i];
    return eager_mode(mod, all, 3 + nargs);
}

static PyObject *bind_mode(PyObject *mod, PyObject *args) {
    PyObject *checks, *grad, *types;
    if (!PyArg_ParseTuple(args, "O!OO!", &PyTuple_Type, &checks, &grad, &PyTuple_Type, &types)) return NULL;
    Py_XSETREF(mode_args, PyTuple_Pack(3, checks, grad, types));
    if (mode_args == NULL) return NULL;
    return PyObject_GetAttrString(mod, "mode");
}

static PyMethodDef methods[] = {
    {"mode", (PyCFunction)(void (*)(void))mode, METH_FASTCALL, "mode(*tensors): eager_mode as bound by bind_mode"},
    {"bind_mode", (PyCFunction)bind_mode, METH_VARARGS, "bind_mode(checks, grad_enabled, tensor_types) -> mode"},
    {"lookup", (PyCFunction)(void (*)(void))lookup, METH_FASTCALL, "lookup(entries, head, tensors[, stream, env])"},
    {"eager_mode", (PyCFunction)(void (*)(void))eager_mode, METH_FASTCALL, "eager_mode(checks, grad, type, *tensors)"},
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL, "run(entry, tensors, device, stream, env): see the source"},
    {"fire", (PyCFunction)(void (*)(void))fire, METH_FASTCALL, "fire(plan, values, stream): see the module doc"},
    {"shape_key", (PyCFunction)(void (*)(void))shape_key, METH_FASTCALL, "shape_key(head, tensors): see the source"},
    {NULL},
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_fastlaunch", "Prepacked HIP launches in C.", -1, methods};

PyMODINIT_FUNC PyInit__fastlaunch(void) {
    if (PyType_Ready(&LauncherType) < 0) return NULL;
    data_ptr_name = PyUnicode_InternFromString("data_ptr");
    shape_name = PyUnicode_InternFromString("shape");
    stride_name = PyUnicode_InternFromString("stride");
    dtype_name = PyUnicode_InternFromString("dtype");
    device_name = PyUnicode_InternFromString("device");
    requires_grad_name = PyUnicode_InternFromString("requires_grad");
    gen_name = PyUnicode_InternFromString("gen");
    get_device_name = PyUnicode_InternFromString("get_device");
    if (!get_device_name) return NULL;
    scratch_name = PyUnicode_InternFromString("scratch");
    if (!device_name || !requires_grad_name || !gen_name || !scratch_name) return NULL;
    if (!data_ptr_name || !shape_name || !stride_name || !dtype_name) return NULL;
    kw_dtype_device = Py_BuildValue("(ss)", "dtype", "device");
    if (kw_dtype_device == NULL) return NULL;
    PyObject *m = PyModule_Create(&moddef);
    if (m == NULL) return NULL;
    Py_INCREF(&LauncherType);
    if (PyModule_AddObject(m, "Launcher", (PyObject *)&LauncherType) < 0) {
        Py_DECREF(&LauncherType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
