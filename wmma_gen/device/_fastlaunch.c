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
/* One translation unit (setup.py builds this file alone); each part has one job:
 *   fastlaunch/common.c    headers, interned names, MAX_VALUES, as_addr
 *   fastlaunch/launcher.c  the Launcher type: kernarg patching and the hipModuleLaunchKernel call
 *   fastlaunch/fire.c      fire: a plan's launches with addresses picked by index
 *   fastlaunch/key.c       shape_key: the call-site key
 *   fastlaunch/run.c       run, lookup: a call-site cache hit (outputs, capture keep, fire)
 *   fastlaunch/mode.c      eager_mode, bind_mode: which path a torch op call takes
 * and below: the method table and the module init. */
#include "fastlaunch/common.c"
#include "fastlaunch/launcher.c"
#include "fastlaunch/fire.c"
#include "fastlaunch/key.c"
#include "fastlaunch/run.c"
#include "fastlaunch/mode.c"

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
