/* ICU's converters as the nvidia-pytriton wheel's libxml2 calls them, refusing every encoding (plates.gpu_check.bundle).
 *
 * libxml2 reads UTF-8 and UTF-16 itself and asks ICU only for other encodings: Triton parses XML only in its cloud
 * storage clients, which a local model repository never uses. ucnv_open answers that no converter exists, as ICU does
 * for a name it does not know, so libxml2 reports the encoding as unsupported; nothing else is reached without a
 * converter. Built under the name of ICU's common library, with that library's version suffix (ICU_SUFFIX, _70),
 * this stands in for it and for its 29 MB data library. No headers: it is built with -nostdlib. */

#define JOIN2(a, b) a##b
#define JOIN(a, b) JOIN2(a, b)
#define ICU(name) JOIN(name, ICU_SUFFIX)

typedef int UErrorCode;
enum { U_ZERO_ERROR = 0, U_FILE_ACCESS_ERROR = 4 };

static void refuse(UErrorCode *error) {
    if (error && *error <= U_ZERO_ERROR)
        *error = U_FILE_ACCESS_ERROR;
}

void *ICU(ucnv_open)(const char *name, UErrorCode *error) {
    (void)name;
    refuse(error);
    return 0;
}

void ICU(ucnv_close)(void *converter) { (void)converter; }

void ICU(ucnv_convertEx)(void *target_converter, void *source_converter, char **target, const char *target_limit,
                         const char **source, const char *source_limit, void *pivot_start, void **pivot_source,
                         void **pivot_target, const void *pivot_limit, char reset, char flush, UErrorCode *error) {
    (void)target_converter, (void)source_converter, (void)target, (void)target_limit, (void)source;
    (void)source_limit, (void)pivot_start, (void)pivot_source, (void)pivot_target, (void)pivot_limit, (void)reset;
    (void)flush;
    refuse(error);
}

void ICU(ucnv_setFromUCallBack)(void *converter, void *action, const void *context, void **old_action,
                                const void **old_context, UErrorCode *error) {
    (void)converter, (void)action, (void)context, (void)old_action, (void)old_context;
    refuse(error);
}

void ICU(ucnv_setToUCallBack)(void *converter, void *action, const void *context, void **old_action,
                              const void **old_context, UErrorCode *error) {
    (void)converter, (void)action, (void)context, (void)old_action, (void)old_context;
    refuse(error);
}

/* The callbacks libxml2 installs on a converter: never called, since no converter is ever opened. */
void ICU(UCNV_FROM_U_CALLBACK_STOP)(void) {}
void ICU(UCNV_TO_U_CALLBACK_STOP)(void) {}
