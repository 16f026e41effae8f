/* The Launcher type: one kernel's kernarg segment, pointer offsets, function handle, grid, block,
 * stream and the address of hipModuleLaunchKernel; a call patches the addresses into its own
 * kernarg buffer and launches with the `extra` form (see _fastlaunch.c's doc).
 */
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
