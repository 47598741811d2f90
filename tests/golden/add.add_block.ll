; ModuleID = 'pto_kernel_add_block'
source_filename = "pto_kernel_add_block"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

%pto_core_ctx = type { i32, i32, ptr, i64, [2 x i64] }
%pto_kernel_tensor = type { ptr, [5 x i64], [5 x i64], i32, i32 }

; Function Attrs: nounwind
define i32 @pto_kernel_add_block(ptr noalias nocapture readonly %tensors, ptr noalias nocapture readonly %scalars, ptr noalias nocapture %ctx) #0 {
entry:
  %divzero = alloca i8, align 1
  store i8 0, ptr %divzero, align 1
  %0 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 3
  %scratch_size = load i64, ptr %0, align 8
  %1 = icmp ult i64 %scratch_size, 32768
  br i1 %1, label %fail, label %ok

fail:                                             ; preds = %entry
  %err_detail = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 4
  store i64 32768, ptr %err_detail, align 8
  %2 = getelementptr inbounds i64, ptr %err_detail, i64 1
  store i64 %scratch_size, ptr %2, align 8
  ret i32 3

ok:                                               ; preds = %entry
  %3 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 2
  %scratch = load ptr, ptr %3, align 8, !nonnull !0, !align !1
  %buf0 = getelementptr inbounds i8, ptr %scratch, i64 0
  %buf1 = getelementptr inbounds i8, ptr %scratch, i64 16384
  %4 = getelementptr inbounds %pto_kernel_tensor, ptr %tensors, i64 0
  %5 = getelementptr inbounds %pto_kernel_tensor, ptr %4, i32 0, i32 0
  %a.data = load ptr, ptr %5, align 8
  %6 = getelementptr inbounds %pto_kernel_tensor, ptr %4, i32 0, i32 2, i32 0
  %a.stride0 = load i64, ptr %6, align 8
  %7 = getelementptr inbounds %pto_kernel_tensor, ptr %4, i32 0, i32 1, i32 0
  %a.dim0 = load i64, ptr %7, align 8
  %8 = getelementptr inbounds %pto_kernel_tensor, ptr %4, i32 0, i32 2, i32 1
  %a.stride1 = load i64, ptr %8, align 8
  %9 = getelementptr inbounds %pto_kernel_tensor, ptr %tensors, i64 1
  %10 = getelementptr inbounds %pto_kernel_tensor, ptr %9, i32 0, i32 0
  %b.data = load ptr, ptr %10, align 8
  %11 = getelementptr inbounds %pto_kernel_tensor, ptr %9, i32 0, i32 2, i32 0
  %b.stride0 = load i64, ptr %11, align 8
  %12 = getelementptr inbounds %pto_kernel_tensor, ptr %9, i32 0, i32 1, i32 0
  %b.dim0 = load i64, ptr %12, align 8
  %13 = icmp ne i64 %a.dim0, %b.dim0
  br i1 %13, label %fail1, label %ok2

fail1:                                            ; preds = %ok
  %err_detail3 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 4
  store i64 %a.dim0, ptr %err_detail3, align 8
  %14 = getelementptr inbounds i64, ptr %err_detail3, i64 1
  store i64 %b.dim0, ptr %14, align 8
  ret i32 2

ok2:                                              ; preds = %ok
  %15 = getelementptr inbounds %pto_kernel_tensor, ptr %9, i32 0, i32 2, i32 1
  %b.stride1 = load i64, ptr %15, align 8
  %16 = getelementptr inbounds %pto_kernel_tensor, ptr %tensors, i64 2
  %17 = getelementptr inbounds %pto_kernel_tensor, ptr %16, i32 0, i32 0
  %c.data = load ptr, ptr %17, align 8
  %18 = getelementptr inbounds %pto_kernel_tensor, ptr %16, i32 0, i32 2, i32 0
  %c.stride0 = load i64, ptr %18, align 8
  %19 = getelementptr inbounds %pto_kernel_tensor, ptr %16, i32 0, i32 1, i32 0
  %c.dim0 = load i64, ptr %19, align 8
  %20 = icmp ne i64 %a.dim0, %c.dim0
  br i1 %20, label %fail4, label %ok5

fail4:                                            ; preds = %ok2
  %err_detail6 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 4
  store i64 %a.dim0, ptr %err_detail6, align 8
  %21 = getelementptr inbounds i64, ptr %err_detail6, i64 1
  store i64 %c.dim0, ptr %21, align 8
  ret i32 2

ok5:                                              ; preds = %ok2
  %22 = getelementptr inbounds %pto_kernel_tensor, ptr %16, i32 0, i32 2, i32 1
  %c.stride1 = load i64, ptr %22, align 8
  %23 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %24 = call i64 @llvm.smax.i64(i64 %23, i64 0)
  %25 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %26 = call i64 @llvm.smax.i64(i64 %25, i64 0)
  %27 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %28 = call i64 @llvm.smax.i64(i64 %27, i64 0)
  %29 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %30 = call i64 @llvm.smax.i64(i64 %29, i64 0)
  %31 = mul i64 0, %a.stride0
  %32 = add i64 0, %31
  %33 = mul i64 0, %a.stride1
  %34 = add i64 %32, %33
  %35 = sub i64 %a.dim0, 0
  %36 = call i64 @llvm.smin.i64(i64 %24, i64 %35)
  %37 = call i64 @llvm.smin.i64(i64 %36, i64 32)
  %38 = call i64 @llvm.smax.i64(i64 %37, i64 0)
  %39 = call i64 @llvm.smin.i64(i64 %26, i64 128)
  %40 = call i64 @llvm.smin.i64(i64 %39, i64 128)
  %41 = call i64 @llvm.smax.i64(i64 %40, i64 0)
  %nr = select i1 true, i64 %38, i64 0
  %nc = select i1 true, i64 %41, i64 0
  %win = getelementptr float, ptr %a.data, i64 %34
  %unit = icmp eq i64 %a.stride1, 1
  br i1 %unit, label %load.unit, label %load.strided

load.unit:                                        ; preds = %ok5
  br label %ld.i.head

load.strided:                                     ; preds = %ok5
  br label %ld.i.head7

load.padrows:                                     ; preds = %ld.i.exit9, %ld.i.exit
  %42 = mul i64 %nr, 128
  br label %ld.padr.head

ld.i.head:                                        ; preds = %ld.padc.exit, %load.unit
  %ld.i = phi i64 [ 0, %load.unit ], [ %58, %ld.padc.exit ]
  %43 = icmp slt i64 %ld.i, %nr
  br i1 %43, label %ld.i.body, label %ld.i.exit

ld.i.body:                                        ; preds = %ld.i.head
  %44 = mul i64 %ld.i, %a.stride0
  %45 = mul i64 %ld.i, 128
  br label %ld.j.head

ld.i.exit:                                        ; preds = %ld.i.head
  br label %load.padrows

ld.j.head:                                        ; preds = %ld.j.body, %ld.i.body
  %ld.j = phi i64 [ 0, %ld.i.body ], [ %52, %ld.j.body ]
  %46 = icmp slt i64 %ld.j, %nc
  br i1 %46, label %ld.j.body, label %ld.j.exit

ld.j.body:                                        ; preds = %ld.j.head
  %47 = add i64 %44, %ld.j
  %48 = getelementptr inbounds float, ptr %win, i64 %47
  %49 = load float, ptr %48, align 4, !alias.scope !2, !noalias !5
  %50 = add i64 %45, %ld.j
  %51 = getelementptr inbounds float, ptr %buf0, i64 %50
  store float %49, ptr %51, align 4, !alias.scope !5, !noalias !2
  %52 = add nsw i64 %ld.j, 1
  br label %ld.j.head

ld.j.exit:                                        ; preds = %ld.j.head
  %53 = add i64 %45, 128
  %54 = add i64 %45, %nc
  br label %ld.padc.head

ld.padc.head:                                     ; preds = %ld.padc.body, %ld.j.exit
  %ld.padc = phi i64 [ %54, %ld.j.exit ], [ %57, %ld.padc.body ]
  %55 = icmp slt i64 %ld.padc, %53
  br i1 %55, label %ld.padc.body, label %ld.padc.exit

ld.padc.body:                                     ; preds = %ld.padc.head
  %56 = getelementptr inbounds float, ptr %buf0, i64 %ld.padc
  store float 0.000000e+00, ptr %56, align 4, !alias.scope !5, !noalias !2
  %57 = add nsw i64 %ld.padc, 1
  br label %ld.padc.head

ld.padc.exit:                                     ; preds = %ld.padc.head
  %58 = add nsw i64 %ld.i, 1
  br label %ld.i.head

ld.i.head7:                                       ; preds = %ld.padc.exit17, %load.strided
  %ld.i10 = phi i64 [ 0, %load.strided ], [ %75, %ld.padc.exit17 ]
  %59 = icmp slt i64 %ld.i10, %nr
  br i1 %59, label %ld.i.body8, label %ld.i.exit9

ld.i.body8:                                       ; preds = %ld.i.head7
  %60 = mul i64 %ld.i10, %a.stride0
  %61 = mul i64 %ld.i10, 128
  br label %ld.j.head11

ld.i.exit9:                                       ; preds = %ld.i.head7
  br label %load.padrows

ld.j.head11:                                      ; preds = %ld.j.body12, %ld.i.body8
  %ld.j14 = phi i64 [ 0, %ld.i.body8 ], [ %69, %ld.j.body12 ]
  %62 = icmp slt i64 %ld.j14, %nc
  br i1 %62, label %ld.j.body12, label %ld.j.exit13

ld.j.body12:                                      ; preds = %ld.j.head11
  %63 = mul i64 %ld.j14, %a.stride1
  %64 = add i64 %60, %63
  %65 = getelementptr inbounds float, ptr %win, i64 %64
  %66 = load float, ptr %65, align 4, !alias.scope !2, !noalias !5
  %67 = add i64 %61, %ld.j14
  %68 = getelementptr inbounds float, ptr %buf0, i64 %67
  store float %66, ptr %68, align 4, !alias.scope !5, !noalias !2
  %69 = add nsw i64 %ld.j14, 1
  br label %ld.j.head11

ld.j.exit13:                                      ; preds = %ld.j.head11
  %70 = add i64 %61, 128
  %71 = add i64 %61, %nc
  br label %ld.padc.head15

ld.padc.head15:                                   ; preds = %ld.padc.body16, %ld.j.exit13
  %ld.padc18 = phi i64 [ %71, %ld.j.exit13 ], [ %74, %ld.padc.body16 ]
  %72 = icmp slt i64 %ld.padc18, %70
  br i1 %72, label %ld.padc.body16, label %ld.padc.exit17

ld.padc.body16:                                   ; preds = %ld.padc.head15
  %73 = getelementptr inbounds float, ptr %buf0, i64 %ld.padc18
  store float 0.000000e+00, ptr %73, align 4, !alias.scope !5, !noalias !2
  %74 = add nsw i64 %ld.padc18, 1
  br label %ld.padc.head15

ld.padc.exit17:                                   ; preds = %ld.padc.head15
  %75 = add nsw i64 %ld.i10, 1
  br label %ld.i.head7

ld.padr.head:                                     ; preds = %ld.padr.body, %load.padrows
  %ld.padr = phi i64 [ %42, %load.padrows ], [ %78, %ld.padr.body ]
  %76 = icmp slt i64 %ld.padr, 4096
  br i1 %76, label %ld.padr.body, label %ld.padr.exit

ld.padr.body:                                     ; preds = %ld.padr.head
  %77 = getelementptr inbounds float, ptr %buf0, i64 %ld.padr
  store float 0.000000e+00, ptr %77, align 4, !alias.scope !5, !noalias !2
  %78 = add nsw i64 %ld.padr, 1
  br label %ld.padr.head

ld.padr.exit:                                     ; preds = %ld.padr.head
  %79 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %80 = call i64 @llvm.smax.i64(i64 %79, i64 0)
  %81 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %82 = call i64 @llvm.smax.i64(i64 %81, i64 0)
  %83 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %84 = call i64 @llvm.smax.i64(i64 %83, i64 0)
  %85 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %86 = call i64 @llvm.smax.i64(i64 %85, i64 0)
  %87 = mul i64 0, %b.stride0
  %88 = add i64 0, %87
  %89 = mul i64 0, %b.stride1
  %90 = add i64 %88, %89
  %91 = sub i64 %b.dim0, 0
  %92 = call i64 @llvm.smin.i64(i64 %80, i64 %91)
  %93 = call i64 @llvm.smin.i64(i64 %92, i64 32)
  %94 = call i64 @llvm.smax.i64(i64 %93, i64 0)
  %95 = call i64 @llvm.smin.i64(i64 %82, i64 128)
  %96 = call i64 @llvm.smin.i64(i64 %95, i64 128)
  %97 = call i64 @llvm.smax.i64(i64 %96, i64 0)
  %nr19 = select i1 true, i64 %94, i64 0
  %nc20 = select i1 true, i64 %97, i64 0
  %win21 = getelementptr float, ptr %b.data, i64 %90
  %unit22 = icmp eq i64 %b.stride1, 1
  br i1 %unit22, label %load.unit23, label %load.strided24

load.unit23:                                      ; preds = %ld.padr.exit
  br label %ld.i.head26

load.strided24:                                   ; preds = %ld.padr.exit
  br label %ld.i.head38

load.padrows25:                                   ; preds = %ld.i.exit40, %ld.i.exit28
  %98 = mul i64 %nr19, 128
  br label %ld.padr.head50

ld.i.head26:                                      ; preds = %ld.padc.exit36, %load.unit23
  %ld.i29 = phi i64 [ 0, %load.unit23 ], [ %114, %ld.padc.exit36 ]
  %99 = icmp slt i64 %ld.i29, %nr19
  br i1 %99, label %ld.i.body27, label %ld.i.exit28

ld.i.body27:                                      ; preds = %ld.i.head26
  %100 = mul i64 %ld.i29, %b.stride0
  %101 = mul i64 %ld.i29, 128
  br label %ld.j.head30

ld.i.exit28:                                      ; preds = %ld.i.head26
  br label %load.padrows25

ld.j.head30:                                      ; preds = %ld.j.body31, %ld.i.body27
  %ld.j33 = phi i64 [ 0, %ld.i.body27 ], [ %108, %ld.j.body31 ]
  %102 = icmp slt i64 %ld.j33, %nc20
  br i1 %102, label %ld.j.body31, label %ld.j.exit32

ld.j.body31:                                      ; preds = %ld.j.head30
  %103 = add i64 %100, %ld.j33
  %104 = getelementptr inbounds float, ptr %win21, i64 %103
  %105 = load float, ptr %104, align 4, !alias.scope !2, !noalias !5
  %106 = add i64 %101, %ld.j33
  %107 = getelementptr inbounds float, ptr %buf1, i64 %106
  store float %105, ptr %107, align 4, !alias.scope !5, !noalias !2
  %108 = add nsw i64 %ld.j33, 1
  br label %ld.j.head30

ld.j.exit32:                                      ; preds = %ld.j.head30
  %109 = add i64 %101, 128
  %110 = add i64 %101, %nc20
  br label %ld.padc.head34

ld.padc.head34:                                   ; preds = %ld.padc.body35, %ld.j.exit32
  %ld.padc37 = phi i64 [ %110, %ld.j.exit32 ], [ %113, %ld.padc.body35 ]
  %111 = icmp slt i64 %ld.padc37, %109
  br i1 %111, label %ld.padc.body35, label %ld.padc.exit36

ld.padc.body35:                                   ; preds = %ld.padc.head34
  %112 = getelementptr inbounds float, ptr %buf1, i64 %ld.padc37
  store float 0.000000e+00, ptr %112, align 4, !alias.scope !5, !noalias !2
  %113 = add nsw i64 %ld.padc37, 1
  br label %ld.padc.head34

ld.padc.exit36:                                   ; preds = %ld.padc.head34
  %114 = add nsw i64 %ld.i29, 1
  br label %ld.i.head26

ld.i.head38:                                      ; preds = %ld.padc.exit48, %load.strided24
  %ld.i41 = phi i64 [ 0, %load.strided24 ], [ %131, %ld.padc.exit48 ]
  %115 = icmp slt i64 %ld.i41, %nr19
  br i1 %115, label %ld.i.body39, label %ld.i.exit40

ld.i.body39:                                      ; preds = %ld.i.head38
  %116 = mul i64 %ld.i41, %b.stride0
  %117 = mul i64 %ld.i41, 128
  br label %ld.j.head42

ld.i.exit40:                                      ; preds = %ld.i.head38
  br label %load.padrows25

ld.j.head42:                                      ; preds = %ld.j.body43, %ld.i.body39
  %ld.j45 = phi i64 [ 0, %ld.i.body39 ], [ %125, %ld.j.body43 ]
  %118 = icmp slt i64 %ld.j45, %nc20
  br i1 %118, label %ld.j.body43, label %ld.j.exit44

ld.j.body43:                                      ; preds = %ld.j.head42
  %119 = mul i64 %ld.j45, %b.stride1
  %120 = add i64 %116, %119
  %121 = getelementptr inbounds float, ptr %win21, i64 %120
  %122 = load float, ptr %121, align 4, !alias.scope !2, !noalias !5
  %123 = add i64 %117, %ld.j45
  %124 = getelementptr inbounds float, ptr %buf1, i64 %123
  store float %122, ptr %124, align 4, !alias.scope !5, !noalias !2
  %125 = add nsw i64 %ld.j45, 1
  br label %ld.j.head42

ld.j.exit44:                                      ; preds = %ld.j.head42
  %126 = add i64 %117, 128
  %127 = add i64 %117, %nc20
  br label %ld.padc.head46

ld.padc.head46:                                   ; preds = %ld.padc.body47, %ld.j.exit44
  %ld.padc49 = phi i64 [ %127, %ld.j.exit44 ], [ %130, %ld.padc.body47 ]
  %128 = icmp slt i64 %ld.padc49, %126
  br i1 %128, label %ld.padc.body47, label %ld.padc.exit48

ld.padc.body47:                                   ; preds = %ld.padc.head46
  %129 = getelementptr inbounds float, ptr %buf1, i64 %ld.padc49
  store float 0.000000e+00, ptr %129, align 4, !alias.scope !5, !noalias !2
  %130 = add nsw i64 %ld.padc49, 1
  br label %ld.padc.head46

ld.padc.exit48:                                   ; preds = %ld.padc.head46
  %131 = add nsw i64 %ld.i41, 1
  br label %ld.i.head38

ld.padr.head50:                                   ; preds = %ld.padr.body51, %load.padrows25
  %ld.padr53 = phi i64 [ %98, %load.padrows25 ], [ %134, %ld.padr.body51 ]
  %132 = icmp slt i64 %ld.padr53, 4096
  br i1 %132, label %ld.padr.body51, label %ld.padr.exit52

ld.padr.body51:                                   ; preds = %ld.padr.head50
  %133 = getelementptr inbounds float, ptr %buf1, i64 %ld.padr53
  store float 0.000000e+00, ptr %133, align 4, !alias.scope !5, !noalias !2
  %134 = add nsw i64 %ld.padr53, 1
  br label %ld.padr.head50

ld.padr.exit52:                                   ; preds = %ld.padr.head50
  %135 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %136 = call i64 @llvm.smax.i64(i64 %135, i64 0)
  %137 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %138 = call i64 @llvm.smax.i64(i64 %137, i64 0)
  br label %ew.head

ew.head:                                          ; preds = %ew.body, %ld.padr.exit52
  %ew = phi i64 [ 0, %ld.padr.exit52 ], [ %146, %ew.body ]
  %139 = icmp slt i64 %ew, 4096
  br i1 %139, label %ew.body, label %ew.exit

ew.body:                                          ; preds = %ew.head
  %140 = getelementptr inbounds float, ptr %buf0, i64 %ew
  %141 = load float, ptr %140, align 4, !alias.scope !5, !noalias !2
  %142 = getelementptr inbounds float, ptr %buf1, i64 %ew
  %143 = load float, ptr %142, align 4, !alias.scope !5, !noalias !2
  %144 = fadd float %141, %143
  %145 = getelementptr inbounds float, ptr %buf0, i64 %ew
  store float %144, ptr %145, align 4, !alias.scope !5, !noalias !2
  %146 = add nsw i64 %ew, 1
  br label %ew.head

ew.exit:                                          ; preds = %ew.head
  %147 = mul i64 0, %c.stride0
  %148 = add i64 0, %147
  %149 = mul i64 0, %c.stride1
  %150 = add i64 %148, %149
  %151 = sub i64 %c.dim0, 0
  %152 = call i64 @llvm.smin.i64(i64 %136, i64 %151)
  %153 = call i64 @llvm.smin.i64(i64 %152, i64 32)
  %154 = call i64 @llvm.smax.i64(i64 %153, i64 0)
  %155 = call i64 @llvm.smin.i64(i64 %138, i64 128)
  %156 = call i64 @llvm.smin.i64(i64 %155, i64 128)
  %157 = call i64 @llvm.smax.i64(i64 %156, i64 0)
  %nr54 = select i1 true, i64 %154, i64 0
  %nc55 = select i1 true, i64 %157, i64 0
  %win56 = getelementptr float, ptr %c.data, i64 %150
  %unit57 = icmp eq i64 %c.stride1, 1
  br i1 %unit57, label %store.unit, label %store.strided

store.unit:                                       ; preds = %ew.exit
  br label %st.i.head

store.strided:                                    ; preds = %ew.exit
  br label %st.i.head58

store.done:                                       ; preds = %st.i.exit60, %st.i.exit
  ret i32 0

st.i.head:                                        ; preds = %st.j.exit, %store.unit
  %st.i = phi i64 [ 0, %store.unit ], [ %168, %st.j.exit ]
  %158 = icmp slt i64 %st.i, %nr54
  br i1 %158, label %st.i.body, label %st.i.exit

st.i.body:                                        ; preds = %st.i.head
  %159 = mul i64 %st.i, %c.stride0
  %160 = mul i64 %st.i, 128
  br label %st.j.head

st.i.exit:                                        ; preds = %st.i.head
  br label %store.done

st.j.head:                                        ; preds = %st.j.body, %st.i.body
  %st.j = phi i64 [ 0, %st.i.body ], [ %167, %st.j.body ]
  %161 = icmp slt i64 %st.j, %nc55
  br i1 %161, label %st.j.body, label %st.j.exit

st.j.body:                                        ; preds = %st.j.head
  %162 = add i64 %160, %st.j
  %163 = getelementptr inbounds float, ptr %buf0, i64 %162
  %164 = load float, ptr %163, align 4, !alias.scope !5, !noalias !2
  %165 = add i64 %159, %st.j
  %166 = getelementptr inbounds float, ptr %win56, i64 %165
  store float %164, ptr %166, align 4, !alias.scope !2, !noalias !5
  %167 = add nsw i64 %st.j, 1
  br label %st.j.head

st.j.exit:                                        ; preds = %st.j.head
  %168 = add nsw i64 %st.i, 1
  br label %st.i.head

st.i.head58:                                      ; preds = %st.j.exit64, %store.strided
  %st.i61 = phi i64 [ 0, %store.strided ], [ %180, %st.j.exit64 ]
  %169 = icmp slt i64 %st.i61, %nr54
  br i1 %169, label %st.i.body59, label %st.i.exit60

st.i.body59:                                      ; preds = %st.i.head58
  %170 = mul i64 %st.i61, %c.stride0
  %171 = mul i64 %st.i61, 128
  br label %st.j.head62

st.i.exit60:                                      ; preds = %st.i.head58
  br label %store.done

st.j.head62:                                      ; preds = %st.j.body63, %st.i.body59
  %st.j65 = phi i64 [ 0, %st.i.body59 ], [ %179, %st.j.body63 ]
  %172 = icmp slt i64 %st.j65, %nc55
  br i1 %172, label %st.j.body63, label %st.j.exit64

st.j.body63:                                      ; preds = %st.j.head62
  %173 = add i64 %171, %st.j65
  %174 = getelementptr inbounds float, ptr %buf0, i64 %173
  %175 = load float, ptr %174, align 4, !alias.scope !5, !noalias !2
  %176 = mul i64 %st.j65, %c.stride1
  %177 = add i64 %170, %176
  %178 = getelementptr inbounds float, ptr %win56, i64 %177
  store float %175, ptr %178, align 4, !alias.scope !2, !noalias !5
  %179 = add nsw i64 %st.j65, 1
  br label %st.j.head62

st.j.exit64:                                      ; preds = %st.j.head62
  %180 = add nsw i64 %st.i61, 1
  br label %st.i.head58

after.return:                                     ; No predecessors!
  ret i32 0
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i64 @llvm.smin.i64(i64, i64) #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i64 @llvm.smax.i64(i64, i64) #1

attributes #0 = { nounwind }
attributes #1 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }

!0 = !{}
!1 = !{i64 64}
!2 = !{!3}
!3 = !{!"pto.tensor", !4}
!4 = !{!"pto.domain"}
!5 = !{!6}
!6 = !{!"pto.scratch", !4}
