; ModuleID = 'pto_kernel_add_block'
source_filename = "pto_kernel_add_block"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

%pto_core_ctx = type { i32, i32, ptr, i64, [2 x i64], ptr }
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
  %42 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %43 = call i64 @llvm.smax.i64(i64 %42, i64 0)
  %44 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %45 = call i64 @llvm.smax.i64(i64 %44, i64 0)
  %46 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %47 = call i64 @llvm.smax.i64(i64 %46, i64 0)
  %48 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %49 = call i64 @llvm.smax.i64(i64 %48, i64 0)
  %50 = mul i64 0, %b.stride0
  %51 = add i64 0, %50
  %52 = mul i64 0, %b.stride1
  %53 = add i64 %51, %52
  %54 = sub i64 %b.dim0, 0
  %55 = call i64 @llvm.smin.i64(i64 %43, i64 %54)
  %56 = call i64 @llvm.smin.i64(i64 %55, i64 32)
  %57 = call i64 @llvm.smax.i64(i64 %56, i64 0)
  %58 = call i64 @llvm.smin.i64(i64 %45, i64 128)
  %59 = call i64 @llvm.smin.i64(i64 %58, i64 128)
  %60 = call i64 @llvm.smax.i64(i64 %59, i64 0)
  %nr7 = select i1 true, i64 %57, i64 0
  %nc8 = select i1 true, i64 %60, i64 0
  %win9 = getelementptr float, ptr %b.data, i64 %53
  %61 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %62 = call i64 @llvm.smax.i64(i64 %61, i64 0)
  %63 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %64 = call i64 @llvm.smax.i64(i64 %63, i64 0)
  %65 = mul i64 0, %c.stride0
  %66 = add i64 0, %65
  %67 = mul i64 0, %c.stride1
  %68 = add i64 %66, %67
  %69 = sub i64 %c.dim0, 0
  %70 = call i64 @llvm.smin.i64(i64 %62, i64 %69)
  %71 = call i64 @llvm.smin.i64(i64 %70, i64 32)
  %72 = call i64 @llvm.smax.i64(i64 %71, i64 0)
  %73 = call i64 @llvm.smin.i64(i64 %64, i64 128)
  %74 = call i64 @llvm.smin.i64(i64 %73, i64 128)
  %75 = call i64 @llvm.smax.i64(i64 %74, i64 0)
  %nr10 = select i1 true, i64 %72, i64 0
  %nc11 = select i1 true, i64 %75, i64 0
  %win12 = getelementptr float, ptr %c.data, i64 %68
  %76 = icmp sge i64 %c.stride0, 0
  %77 = icmp eq i64 %c.stride1, 1
  %78 = and i1 %77, %76
  %79 = sub i64 %nr10, 1
  %80 = mul i64 %79, %c.stride0
  %81 = add i64 %80, %nc11
  %82 = icmp eq i64 %nc11, 0
  %83 = icmp eq i64 %nr10, 0
  %84 = or i1 %83, %82
  %85 = select i1 %84, i64 0, i64 %81
  %86 = ptrtoint ptr %win12 to i64
  %87 = mul i64 %85, 4
  %88 = add i64 %86, %87
  %89 = icmp eq i64 %a.stride1, 1
  %90 = and i1 %78, %89
  %91 = icmp sge i64 %a.stride0, 0
  %92 = and i1 %90, %91
  %93 = icmp sge i64 %nr, %nr10
  %94 = and i1 %92, %93
  %95 = icmp sge i64 %nc, %nc11
  %96 = and i1 %94, %95
  %97 = sub i64 %nr10, 1
  %98 = mul i64 %97, %a.stride0
  %99 = add i64 %98, %nc11
  %100 = icmp eq i64 %nc11, 0
  %101 = icmp eq i64 %nr10, 0
  %102 = or i1 %101, %100
  %103 = select i1 %102, i64 0, i64 %99
  %104 = ptrtoint ptr %win to i64
  %105 = mul i64 %103, 4
  %106 = add i64 %104, %105
  %107 = icmp ule i64 %88, %104
  %108 = icmp ule i64 %106, %86
  %109 = or i1 %108, %107
  %110 = and i1 %96, %109
  %111 = icmp eq i64 %b.stride1, 1
  %112 = and i1 %110, %111
  %113 = icmp sge i64 %b.stride0, 0
  %114 = and i1 %112, %113
  %115 = icmp sge i64 %nr7, %nr10
  %116 = and i1 %114, %115
  %117 = icmp sge i64 %nc8, %nc11
  %118 = and i1 %116, %117
  %119 = sub i64 %nr10, 1
  %120 = mul i64 %119, %b.stride0
  %121 = add i64 %120, %nc11
  %122 = icmp eq i64 %nc11, 0
  %123 = icmp eq i64 %nr10, 0
  %124 = or i1 %123, %122
  %125 = select i1 %124, i64 0, i64 %121
  %126 = ptrtoint ptr %win9 to i64
  %127 = mul i64 %125, 4
  %128 = add i64 %126, %127
  %129 = icmp ule i64 %88, %126
  %130 = icmp ule i64 %128, %86
  %131 = or i1 %130, %129
  %132 = and i1 %118, %131
  br i1 %132, label %stream, label %stream.buffered

stream:                                           ; preds = %ok5
  br label %sm.i.head

stream.buffered:                                  ; preds = %ok5
  %133 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %134 = call i64 @llvm.smax.i64(i64 %133, i64 0)
  %135 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %136 = call i64 @llvm.smax.i64(i64 %135, i64 0)
  %137 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %138 = call i64 @llvm.smax.i64(i64 %137, i64 0)
  %139 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %140 = call i64 @llvm.smax.i64(i64 %139, i64 0)
  %141 = mul i64 0, %a.stride0
  %142 = add i64 0, %141
  %143 = mul i64 0, %a.stride1
  %144 = add i64 %142, %143
  %145 = sub i64 %a.dim0, 0
  %146 = call i64 @llvm.smin.i64(i64 %134, i64 %145)
  %147 = call i64 @llvm.smin.i64(i64 %146, i64 32)
  %148 = call i64 @llvm.smax.i64(i64 %147, i64 0)
  %149 = call i64 @llvm.smin.i64(i64 %136, i64 128)
  %150 = call i64 @llvm.smin.i64(i64 %149, i64 128)
  %151 = call i64 @llvm.smax.i64(i64 %150, i64 0)
  %nr13 = select i1 true, i64 %148, i64 0
  %nc14 = select i1 true, i64 %151, i64 0
  %win15 = getelementptr float, ptr %a.data, i64 %144
  %unit = icmp eq i64 %a.stride1, 1
  br i1 %unit, label %load.unit, label %load.strided

stream.done:                                      ; preds = %store.done, %sm.i.exit
  ret i32 0

sm.i.head:                                        ; preds = %sm.j.exit, %stream
  %sm.i = phi i64 [ 0, %stream ], [ %169, %sm.j.exit ]
  %152 = icmp slt i64 %sm.i, %nr10
  br i1 %152, label %sm.i.body, label %sm.i.exit

sm.i.body:                                        ; preds = %sm.i.head
  %153 = mul i64 %sm.i, 128
  br label %sm.j.head

sm.i.exit:                                        ; preds = %sm.i.head
  br label %stream.done

sm.j.head:                                        ; preds = %sm.j.body, %sm.i.body
  %sm.j = phi i64 [ 0, %sm.i.body ], [ %168, %sm.j.body ]
  %154 = icmp slt i64 %sm.j, %nc11
  br i1 %154, label %sm.j.body, label %sm.j.exit

sm.j.body:                                        ; preds = %sm.j.head
  %155 = mul i64 %sm.i, %a.stride0
  %156 = add i64 %155, %sm.j
  %157 = getelementptr inbounds float, ptr %win, i64 %156
  %158 = load float, ptr %157, align 4, !alias.scope !2, !noalias !6
  %159 = mul i64 %sm.i, %b.stride0
  %160 = add i64 %159, %sm.j
  %161 = getelementptr inbounds float, ptr %win9, i64 %160
  %162 = load float, ptr %161, align 4, !alias.scope !2, !noalias !6
  %163 = add i64 %153, %sm.j
  %164 = fadd float %158, %162
  %165 = mul i64 %sm.i, %c.stride0
  %166 = add i64 %165, %sm.j
  %167 = getelementptr inbounds float, ptr %win12, i64 %166
  store float %164, ptr %167, align 4, !alias.scope !9, !noalias !10
  %168 = add nsw i64 %sm.j, 1
  br label %sm.j.head

sm.j.exit:                                        ; preds = %sm.j.head
  %169 = add nsw i64 %sm.i, 1
  br label %sm.i.head

load.unit:                                        ; preds = %stream.buffered
  br label %ld.i.head

load.strided:                                     ; preds = %stream.buffered
  br label %ld.i.head16

load.padrows:                                     ; preds = %ld.i.exit18, %ld.i.exit
  %170 = mul i64 %nr13, 128
  br label %ld.padr.head

ld.i.head:                                        ; preds = %ld.padc.exit, %load.unit
  %ld.i = phi i64 [ 0, %load.unit ], [ %186, %ld.padc.exit ]
  %171 = icmp slt i64 %ld.i, %nr13
  br i1 %171, label %ld.i.body, label %ld.i.exit

ld.i.body:                                        ; preds = %ld.i.head
  %172 = mul i64 %ld.i, %a.stride0
  %173 = mul i64 %ld.i, 128
  br label %ld.j.head

ld.i.exit:                                        ; preds = %ld.i.head
  br label %load.padrows

ld.j.head:                                        ; preds = %ld.j.body, %ld.i.body
  %ld.j = phi i64 [ 0, %ld.i.body ], [ %180, %ld.j.body ]
  %174 = icmp slt i64 %ld.j, %nc14
  br i1 %174, label %ld.j.body, label %ld.j.exit

ld.j.body:                                        ; preds = %ld.j.head
  %175 = add i64 %172, %ld.j
  %176 = getelementptr inbounds float, ptr %win15, i64 %175
  %177 = load float, ptr %176, align 4, !alias.scope !11, !noalias !12
  %178 = add i64 %173, %ld.j
  %179 = getelementptr inbounds float, ptr %buf0, i64 %178
  store float %177, ptr %179, align 4, !alias.scope !12, !noalias !11
  %180 = add nsw i64 %ld.j, 1
  br label %ld.j.head

ld.j.exit:                                        ; preds = %ld.j.head
  %181 = add i64 %173, 128
  %182 = add i64 %173, %nc14
  br label %ld.padc.head

ld.padc.head:                                     ; preds = %ld.padc.body, %ld.j.exit
  %ld.padc = phi i64 [ %182, %ld.j.exit ], [ %185, %ld.padc.body ]
  %183 = icmp slt i64 %ld.padc, %181
  br i1 %183, label %ld.padc.body, label %ld.padc.exit

ld.padc.body:                                     ; preds = %ld.padc.head
  %184 = getelementptr inbounds float, ptr %buf0, i64 %ld.padc
  store float 0.000000e+00, ptr %184, align 4, !alias.scope !12, !noalias !11
  %185 = add nsw i64 %ld.padc, 1
  br label %ld.padc.head

ld.padc.exit:                                     ; preds = %ld.padc.head
  %186 = add nsw i64 %ld.i, 1
  br label %ld.i.head

ld.i.head16:                                      ; preds = %ld.padc.exit26, %load.strided
  %ld.i19 = phi i64 [ 0, %load.strided ], [ %203, %ld.padc.exit26 ]
  %187 = icmp slt i64 %ld.i19, %nr13
  br i1 %187, label %ld.i.body17, label %ld.i.exit18

ld.i.body17:                                      ; preds = %ld.i.head16
  %188 = mul i64 %ld.i19, %a.stride0
  %189 = mul i64 %ld.i19, 128
  br label %ld.j.head20

ld.i.exit18:                                      ; preds = %ld.i.head16
  br label %load.padrows

ld.j.head20:                                      ; preds = %ld.j.body21, %ld.i.body17
  %ld.j23 = phi i64 [ 0, %ld.i.body17 ], [ %197, %ld.j.body21 ]
  %190 = icmp slt i64 %ld.j23, %nc14
  br i1 %190, label %ld.j.body21, label %ld.j.exit22

ld.j.body21:                                      ; preds = %ld.j.head20
  %191 = mul i64 %ld.j23, %a.stride1
  %192 = add i64 %188, %191
  %193 = getelementptr inbounds float, ptr %win15, i64 %192
  %194 = load float, ptr %193, align 4, !alias.scope !11, !noalias !12
  %195 = add i64 %189, %ld.j23
  %196 = getelementptr inbounds float, ptr %buf0, i64 %195
  store float %194, ptr %196, align 4, !alias.scope !12, !noalias !11
  %197 = add nsw i64 %ld.j23, 1
  br label %ld.j.head20

ld.j.exit22:                                      ; preds = %ld.j.head20
  %198 = add i64 %189, 128
  %199 = add i64 %189, %nc14
  br label %ld.padc.head24

ld.padc.head24:                                   ; preds = %ld.padc.body25, %ld.j.exit22
  %ld.padc27 = phi i64 [ %199, %ld.j.exit22 ], [ %202, %ld.padc.body25 ]
  %200 = icmp slt i64 %ld.padc27, %198
  br i1 %200, label %ld.padc.body25, label %ld.padc.exit26

ld.padc.body25:                                   ; preds = %ld.padc.head24
  %201 = getelementptr inbounds float, ptr %buf0, i64 %ld.padc27
  store float 0.000000e+00, ptr %201, align 4, !alias.scope !12, !noalias !11
  %202 = add nsw i64 %ld.padc27, 1
  br label %ld.padc.head24

ld.padc.exit26:                                   ; preds = %ld.padc.head24
  %203 = add nsw i64 %ld.i19, 1
  br label %ld.i.head16

ld.padr.head:                                     ; preds = %ld.padr.body, %load.padrows
  %ld.padr = phi i64 [ %170, %load.padrows ], [ %206, %ld.padr.body ]
  %204 = icmp slt i64 %ld.padr, 4096
  br i1 %204, label %ld.padr.body, label %ld.padr.exit

ld.padr.body:                                     ; preds = %ld.padr.head
  %205 = getelementptr inbounds float, ptr %buf0, i64 %ld.padr
  store float 0.000000e+00, ptr %205, align 4, !alias.scope !12, !noalias !11
  %206 = add nsw i64 %ld.padr, 1
  br label %ld.padr.head

ld.padr.exit:                                     ; preds = %ld.padr.head
  %207 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %208 = call i64 @llvm.smax.i64(i64 %207, i64 0)
  %209 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %210 = call i64 @llvm.smax.i64(i64 %209, i64 0)
  %211 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %212 = call i64 @llvm.smax.i64(i64 %211, i64 0)
  %213 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %214 = call i64 @llvm.smax.i64(i64 %213, i64 0)
  %215 = mul i64 0, %b.stride0
  %216 = add i64 0, %215
  %217 = mul i64 0, %b.stride1
  %218 = add i64 %216, %217
  %219 = sub i64 %b.dim0, 0
  %220 = call i64 @llvm.smin.i64(i64 %208, i64 %219)
  %221 = call i64 @llvm.smin.i64(i64 %220, i64 32)
  %222 = call i64 @llvm.smax.i64(i64 %221, i64 0)
  %223 = call i64 @llvm.smin.i64(i64 %210, i64 128)
  %224 = call i64 @llvm.smin.i64(i64 %223, i64 128)
  %225 = call i64 @llvm.smax.i64(i64 %224, i64 0)
  %nr28 = select i1 true, i64 %222, i64 0
  %nc29 = select i1 true, i64 %225, i64 0
  %win30 = getelementptr float, ptr %b.data, i64 %218
  %unit31 = icmp eq i64 %b.stride1, 1
  br i1 %unit31, label %load.unit32, label %load.strided33

load.unit32:                                      ; preds = %ld.padr.exit
  br label %ld.i.head35

load.strided33:                                   ; preds = %ld.padr.exit
  br label %ld.i.head47

load.padrows34:                                   ; preds = %ld.i.exit49, %ld.i.exit37
  %226 = mul i64 %nr28, 128
  br label %ld.padr.head59

ld.i.head35:                                      ; preds = %ld.padc.exit45, %load.unit32
  %ld.i38 = phi i64 [ 0, %load.unit32 ], [ %242, %ld.padc.exit45 ]
  %227 = icmp slt i64 %ld.i38, %nr28
  br i1 %227, label %ld.i.body36, label %ld.i.exit37

ld.i.body36:                                      ; preds = %ld.i.head35
  %228 = mul i64 %ld.i38, %b.stride0
  %229 = mul i64 %ld.i38, 128
  br label %ld.j.head39

ld.i.exit37:                                      ; preds = %ld.i.head35
  br label %load.padrows34

ld.j.head39:                                      ; preds = %ld.j.body40, %ld.i.body36
  %ld.j42 = phi i64 [ 0, %ld.i.body36 ], [ %236, %ld.j.body40 ]
  %230 = icmp slt i64 %ld.j42, %nc29
  br i1 %230, label %ld.j.body40, label %ld.j.exit41

ld.j.body40:                                      ; preds = %ld.j.head39
  %231 = add i64 %228, %ld.j42
  %232 = getelementptr inbounds float, ptr %win30, i64 %231
  %233 = load float, ptr %232, align 4, !alias.scope !11, !noalias !12
  %234 = add i64 %229, %ld.j42
  %235 = getelementptr inbounds float, ptr %buf1, i64 %234
  store float %233, ptr %235, align 4, !alias.scope !12, !noalias !11
  %236 = add nsw i64 %ld.j42, 1
  br label %ld.j.head39

ld.j.exit41:                                      ; preds = %ld.j.head39
  %237 = add i64 %229, 128
  %238 = add i64 %229, %nc29
  br label %ld.padc.head43

ld.padc.head43:                                   ; preds = %ld.padc.body44, %ld.j.exit41
  %ld.padc46 = phi i64 [ %238, %ld.j.exit41 ], [ %241, %ld.padc.body44 ]
  %239 = icmp slt i64 %ld.padc46, %237
  br i1 %239, label %ld.padc.body44, label %ld.padc.exit45

ld.padc.body44:                                   ; preds = %ld.padc.head43
  %240 = getelementptr inbounds float, ptr %buf1, i64 %ld.padc46
  store float 0.000000e+00, ptr %240, align 4, !alias.scope !12, !noalias !11
  %241 = add nsw i64 %ld.padc46, 1
  br label %ld.padc.head43

ld.padc.exit45:                                   ; preds = %ld.padc.head43
  %242 = add nsw i64 %ld.i38, 1
  br label %ld.i.head35

ld.i.head47:                                      ; preds = %ld.padc.exit57, %load.strided33
  %ld.i50 = phi i64 [ 0, %load.strided33 ], [ %259, %ld.padc.exit57 ]
  %243 = icmp slt i64 %ld.i50, %nr28
  br i1 %243, label %ld.i.body48, label %ld.i.exit49

ld.i.body48:                                      ; preds = %ld.i.head47
  %244 = mul i64 %ld.i50, %b.stride0
  %245 = mul i64 %ld.i50, 128
  br label %ld.j.head51

ld.i.exit49:                                      ; preds = %ld.i.head47
  br label %load.padrows34

ld.j.head51:                                      ; preds = %ld.j.body52, %ld.i.body48
  %ld.j54 = phi i64 [ 0, %ld.i.body48 ], [ %253, %ld.j.body52 ]
  %246 = icmp slt i64 %ld.j54, %nc29
  br i1 %246, label %ld.j.body52, label %ld.j.exit53

ld.j.body52:                                      ; preds = %ld.j.head51
  %247 = mul i64 %ld.j54, %b.stride1
  %248 = add i64 %244, %247
  %249 = getelementptr inbounds float, ptr %win30, i64 %248
  %250 = load float, ptr %249, align 4, !alias.scope !11, !noalias !12
  %251 = add i64 %245, %ld.j54
  %252 = getelementptr inbounds float, ptr %buf1, i64 %251
  store float %250, ptr %252, align 4, !alias.scope !12, !noalias !11
  %253 = add nsw i64 %ld.j54, 1
  br label %ld.j.head51

ld.j.exit53:                                      ; preds = %ld.j.head51
  %254 = add i64 %245, 128
  %255 = add i64 %245, %nc29
  br label %ld.padc.head55

ld.padc.head55:                                   ; preds = %ld.padc.body56, %ld.j.exit53
  %ld.padc58 = phi i64 [ %255, %ld.j.exit53 ], [ %258, %ld.padc.body56 ]
  %256 = icmp slt i64 %ld.padc58, %254
  br i1 %256, label %ld.padc.body56, label %ld.padc.exit57

ld.padc.body56:                                   ; preds = %ld.padc.head55
  %257 = getelementptr inbounds float, ptr %buf1, i64 %ld.padc58
  store float 0.000000e+00, ptr %257, align 4, !alias.scope !12, !noalias !11
  %258 = add nsw i64 %ld.padc58, 1
  br label %ld.padc.head55

ld.padc.exit57:                                   ; preds = %ld.padc.head55
  %259 = add nsw i64 %ld.i50, 1
  br label %ld.i.head47

ld.padr.head59:                                   ; preds = %ld.padr.body60, %load.padrows34
  %ld.padr62 = phi i64 [ %226, %load.padrows34 ], [ %262, %ld.padr.body60 ]
  %260 = icmp slt i64 %ld.padr62, 4096
  br i1 %260, label %ld.padr.body60, label %ld.padr.exit61

ld.padr.body60:                                   ; preds = %ld.padr.head59
  %261 = getelementptr inbounds float, ptr %buf1, i64 %ld.padr62
  store float 0.000000e+00, ptr %261, align 4, !alias.scope !12, !noalias !11
  %262 = add nsw i64 %ld.padr62, 1
  br label %ld.padr.head59

ld.padr.exit61:                                   ; preds = %ld.padr.head59
  %263 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %264 = call i64 @llvm.smax.i64(i64 %263, i64 0)
  %265 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %266 = call i64 @llvm.smax.i64(i64 %265, i64 0)
  br label %ew.head

ew.head:                                          ; preds = %ew.body, %ld.padr.exit61
  %ew = phi i64 [ 0, %ld.padr.exit61 ], [ %274, %ew.body ]
  %267 = icmp slt i64 %ew, 4096
  br i1 %267, label %ew.body, label %ew.exit

ew.body:                                          ; preds = %ew.head
  %268 = getelementptr inbounds float, ptr %buf0, i64 %ew
  %269 = load float, ptr %268, align 4, !alias.scope !12, !noalias !11
  %270 = getelementptr inbounds float, ptr %buf1, i64 %ew
  %271 = load float, ptr %270, align 4, !alias.scope !12, !noalias !11
  %272 = fadd float %269, %271
  %273 = getelementptr inbounds float, ptr %buf0, i64 %ew
  store float %272, ptr %273, align 4, !alias.scope !12, !noalias !11
  %274 = add nsw i64 %ew, 1
  br label %ew.head

ew.exit:                                          ; preds = %ew.head
  %275 = mul i64 0, %c.stride0
  %276 = add i64 0, %275
  %277 = mul i64 0, %c.stride1
  %278 = add i64 %276, %277
  %279 = sub i64 %c.dim0, 0
  %280 = call i64 @llvm.smin.i64(i64 %264, i64 %279)
  %281 = call i64 @llvm.smin.i64(i64 %280, i64 32)
  %282 = call i64 @llvm.smax.i64(i64 %281, i64 0)
  %283 = call i64 @llvm.smin.i64(i64 %266, i64 128)
  %284 = call i64 @llvm.smin.i64(i64 %283, i64 128)
  %285 = call i64 @llvm.smax.i64(i64 %284, i64 0)
  %nr63 = select i1 true, i64 %282, i64 0
  %nc64 = select i1 true, i64 %285, i64 0
  %win65 = getelementptr float, ptr %c.data, i64 %278
  %unit66 = icmp eq i64 %c.stride1, 1
  br i1 %unit66, label %store.unit, label %store.strided

store.unit:                                       ; preds = %ew.exit
  br label %st.i.head

store.strided:                                    ; preds = %ew.exit
  br label %st.i.head67

store.done:                                       ; preds = %st.i.exit69, %st.i.exit
  br label %stream.done

st.i.head:                                        ; preds = %st.j.exit, %store.unit
  %st.i = phi i64 [ 0, %store.unit ], [ %296, %st.j.exit ]
  %286 = icmp slt i64 %st.i, %nr63
  br i1 %286, label %st.i.body, label %st.i.exit

st.i.body:                                        ; preds = %st.i.head
  %287 = mul i64 %st.i, %c.stride0
  %288 = mul i64 %st.i, 128
  br label %st.j.head

st.i.exit:                                        ; preds = %st.i.head
  br label %store.done

st.j.head:                                        ; preds = %st.j.body, %st.i.body
  %st.j = phi i64 [ 0, %st.i.body ], [ %295, %st.j.body ]
  %289 = icmp slt i64 %st.j, %nc64
  br i1 %289, label %st.j.body, label %st.j.exit

st.j.body:                                        ; preds = %st.j.head
  %290 = add i64 %288, %st.j
  %291 = getelementptr inbounds float, ptr %buf0, i64 %290
  %292 = load float, ptr %291, align 4, !alias.scope !12, !noalias !11
  %293 = add i64 %287, %st.j
  %294 = getelementptr inbounds float, ptr %win65, i64 %293
  store float %292, ptr %294, align 4, !alias.scope !11, !noalias !12
  %295 = add nsw i64 %st.j, 1
  br label %st.j.head

st.j.exit:                                        ; preds = %st.j.head
  %296 = add nsw i64 %st.i, 1
  br label %st.i.head

st.i.head67:                                      ; preds = %st.j.exit73, %store.strided
  %st.i70 = phi i64 [ 0, %store.strided ], [ %308, %st.j.exit73 ]
  %297 = icmp slt i64 %st.i70, %nr63
  br i1 %297, label %st.i.body68, label %st.i.exit69

st.i.body68:                                      ; preds = %st.i.head67
  %298 = mul i64 %st.i70, %c.stride0
  %299 = mul i64 %st.i70, 128
  br label %st.j.head71

st.i.exit69:                                      ; preds = %st.i.head67
  br label %store.done

st.j.head71:                                      ; preds = %st.j.body72, %st.i.body68
  %st.j74 = phi i64 [ 0, %st.i.body68 ], [ %307, %st.j.body72 ]
  %300 = icmp slt i64 %st.j74, %nc64
  br i1 %300, label %st.j.body72, label %st.j.exit73

st.j.body72:                                      ; preds = %st.j.head71
  %301 = add i64 %299, %st.j74
  %302 = getelementptr inbounds float, ptr %buf0, i64 %301
  %303 = load float, ptr %302, align 4, !alias.scope !12, !noalias !11
  %304 = mul i64 %st.j74, %c.stride1
  %305 = add i64 %298, %304
  %306 = getelementptr inbounds float, ptr %win65, i64 %305
  store float %303, ptr %306, align 4, !alias.scope !11, !noalias !12
  %307 = add nsw i64 %st.j74, 1
  br label %st.j.head71

st.j.exit73:                                      ; preds = %st.j.head71
  %308 = add nsw i64 %st.i70, 1
  br label %st.i.head67

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
!2 = !{!3, !5}
!3 = !{!"pto.tensor", !4}
!4 = !{!"pto.domain"}
!5 = !{!"pto.stream0.load", !4}
!6 = !{!7, !8}
!7 = !{!"pto.scratch", !4}
!8 = !{!"pto.stream0.store", !4}
!9 = !{!3, !8}
!10 = !{!7, !5}
!11 = !{!3}
!12 = !{!7}
