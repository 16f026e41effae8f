/* What every part of _fastlaunch shares (one translation unit: _fastlaunch.c includes the parts in
 * order): the Python headers, the interned attribute names the module init fills, the most addresses
 * one call handles, and an address read from an int, None or an object with data_ptr().
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static PyObject *get_device_name, *gen_name, *scratch_name, *device_name, *requires_grad_name, *data_ptr_name, *shape_name, *stride_name, *dtype_name;

#define MAX_VALUES 256      /* addresses per fire / run / key: a fixed stack array */

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
