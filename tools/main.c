#include <stdio.h>
int main(void) { puts("pto"); return 0; }
