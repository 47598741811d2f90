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
  %152 = mul i64 %nc14, 4
  %153 = icmp eq i64 %a.stride0, %nc14
  %pf.bytes = select i1 %153, i64 0, i64 %152
  br i1 %unit, label %load.unit, label %load.strided

stream.done:                                      ; preds = %store.done, %sm.i.exit
  ret i32 0

sm.i.head:                                        ; preds = %sm.j.exit, %stream
  %sm.i = phi i64 [ 0, %stream ], [ %171, %sm.j.exit ]
  %154 = icmp slt i64 %sm.i, %nr10
  br i1 %154, label %sm.i.body, label %sm.i.exit

sm.i.body:                                        ; preds = %sm.i.head
  %155 = mul i64 %sm.i, 128
  br label %sm.j.head

sm.i.exit:                                        ; preds = %sm.i.head
  br label %stream.done

sm.j.head:                                        ; preds = %sm.j.body, %sm.i.body
  %sm.j = phi i64 [ 0, %sm.i.body ], [ %170, %sm.j.body ]
  %156 = icmp slt i64 %sm.j, %nc11
  br i1 %156, label %sm.j.body, label %sm.j.exit

sm.j.body:                                        ; preds = %sm.j.head
  %157 = mul i64 %sm.i, %a.stride0
  %158 = add i64 %157, %sm.j
  %159 = getelementptr inbounds float, ptr %win, i64 %158
  %160 = load float, ptr %159, align 4, !alias.scope !2, !noalias !6
  %161 = mul i64 %sm.i, %b.stride0
  %162 = add i64 %161, %sm.j
  %163 = getelementptr inbounds float, ptr %win9, i64 %162
  %164 = load float, ptr %163, align 4, !alias.scope !2, !noalias !6
  %165 = add i64 %155, %sm.j
  %166 = fadd float %160, %164
  %167 = mul i64 %sm.i, %c.stride0
  %168 = add i64 %167, %sm.j
  %169 = getelementptr inbounds float, ptr %win12, i64 %168
  store float %166, ptr %169, align 4, !alias.scope !9, !noalias !10
  %170 = add nsw i64 %sm.j, 1
  br label %sm.j.head

sm.j.exit:                                        ; preds = %sm.j.head
  %171 = add nsw i64 %sm.i, 1
  br label %sm.i.head

load.unit:                                        ; preds = %stream.buffered
  br label %ld.i.head

load.strided:                                     ; preds = %stream.buffered
  br label %ld.i.head16

load.padrows:                                     ; preds = %ld.i.exit18, %ld.i.exit
  %172 = mul i64 %nr13, 128
  br label %ld.padr.head

ld.i.head:                                        ; preds = %ld.padc.exit, %load.unit
  %ld.i = phi i64 [ 0, %load.unit ], [ %196, %ld.padc.exit ]
  %173 = icmp slt i64 %ld.i, %nr13
  br i1 %173, label %ld.i.body, label %ld.i.exit

ld.i.body:                                        ; preds = %ld.i.head
  %174 = mul i64 %ld.i, %a.stride0
  %175 = mul i64 %ld.i, 128
  %176 = mul i64 8, %a.stride0
  %177 = add i64 %174, %176
  %pf.row = getelementptr float, ptr %win15, i64 %177
  %178 = add i64 %pf.bytes, 63
  %179 = lshr i64 %178, 6
  br label %pf.line.head

ld.i.exit:                                        ; preds = %ld.i.head
  br label %load.padrows

pf.line.head:                                     ; preds = %pf.line.body, %ld.i.body
  %pf.line = phi i64 [ 0, %ld.i.body ], [ %183, %pf.line.body ]
  %180 = icmp slt i64 %pf.line, %179
  br i1 %180, label %pf.line.body, label %pf.line.exit

pf.line.body:                                     ; preds = %pf.line.head
  %181 = mul i64 %pf.line, 64
  %182 = getelementptr i8, ptr %pf.row, i64 %181
  call void @llvm.prefetch.p0(ptr %182, i32 0, i32 3, i32 1)
  %183 = add nsw i64 %pf.line, 1
  br label %pf.line.head

pf.line.exit:                                     ; preds = %pf.line.head
  br label %ld.j.head

ld.j.head:                                        ; preds = %ld.j.body, %pf.line.exit
  %ld.j = phi i64 [ 0, %pf.line.exit ], [ %190, %ld.j.body ]
  %184 = icmp slt i64 %ld.j, %nc14
  br i1 %184, label %ld.j.body, label %ld.j.exit

ld.j.body:                                        ; preds = %ld.j.head
  %185 = add i64 %174, %ld.j
  %186 = getelementptr inbounds float, ptr %win15, i64 %185
  %187 = load float, ptr %186, align 4, !alias.scope !11, !noalias !12
  %188 = add i64 %175, %ld.j
  %189 = getelementptr inbounds float, ptr %buf0, i64 %188
  store float %187, ptr %189, align 4, !alias.scope !12, !noalias !11
  %190 = add nsw i64 %ld.j, 1
  br label %ld.j.head

ld.j.exit:                                        ; preds = %ld.j.head
  %191 = add i64 %175, 128
  %192 = add i64 %175, %nc14
  br label %ld.padc.head

ld.padc.head:                                     ; preds = %ld.padc.body, %ld.j.exit
  %ld.padc = phi i64 [ %192, %ld.j.exit ], [ %195, %ld.padc.body ]
  %193 = icmp slt i64 %ld.padc, %191
  br i1 %193, label %ld.padc.body, label %ld.padc.exit

ld.padc.body:                                     ; preds = %ld.padc.head
  %194 = getelementptr inbounds float, ptr %buf0, i64 %ld.padc
  store float 0.000000e+00, ptr %194, align 4, !alias.scope !12, !noalias !11
  %195 = add nsw i64 %ld.padc, 1
  br label %ld.padc.head

ld.padc.exit:                                     ; preds = %ld.padc.head
  %196 = add nsw i64 %ld.i, 1
  br label %ld.i.head

ld.i.head16:                                      ; preds = %ld.padc.exit26, %load.strided
  %ld.i19 = phi i64 [ 0, %load.strided ], [ %213, %ld.padc.exit26 ]
  %197 = icmp slt i64 %ld.i19, %nr13
  br i1 %197, label %ld.i.body17, label %ld.i.exit18

ld.i.body17:                                      ; preds = %ld.i.head16
  %198 = mul i64 %ld.i19, %a.stride0
  %199 = mul i64 %ld.i19, 128
  br label %ld.j.head20

ld.i.exit18:                                      ; preds = %ld.i.head16
  br label %load.padrows

ld.j.head20:                                      ; preds = %ld.j.body21, %ld.i.body17
  %ld.j23 = phi i64 [ 0, %ld.i.body17 ], [ %207, %ld.j.body21 ]
  %200 = icmp slt i64 %ld.j23, %nc14
  br i1 %200, label %ld.j.body21, label %ld.j.exit22

ld.j.body21:                                      ; preds = %ld.j.head20
  %201 = mul i64 %ld.j23, %a.stride1
  %202 = add i64 %198, %201
  %203 = getelementptr inbounds float, ptr %win15, i64 %202
  %204 = load float, ptr %203, align 4, !alias.scope !11, !noalias !12
  %205 = add i64 %199, %ld.j23
  %206 = getelementptr inbounds float, ptr %buf0, i64 %205
  store float %204, ptr %206, align 4, !alias.scope !12, !noalias !11
  %207 = add nsw i64 %ld.j23, 1
  br label %ld.j.head20

ld.j.exit22:                                      ; preds = %ld.j.head20
  %208 = add i64 %199, 128
  %209 = add i64 %199, %nc14
  br label %ld.padc.head24

ld.padc.head24:                                   ; preds = %ld.padc.body25, %ld.j.exit22
  %ld.padc27 = phi i64 [ %209, %ld.j.exit22 ], [ %212, %ld.padc.body25 ]
  %210 = icmp slt i64 %ld.padc27, %208
  br i1 %210, label %ld.padc.body25, label %ld.padc.exit26

ld.padc.body25:                                   ; preds = %ld.padc.head24
  %211 = getelementptr inbounds float, ptr %buf0, i64 %ld.padc27
  store float 0.000000e+00, ptr %211, align 4, !alias.scope !12, !noalias !11
  %212 = add nsw i64 %ld.padc27, 1
  br label %ld.padc.head24

ld.padc.exit26:                                   ; preds = %ld.padc.head24
  %213 = add nsw i64 %ld.i19, 1
  br label %ld.i.head16

ld.padr.head:                                     ; preds = %ld.padr.body, %load.padrows
  %ld.padr = phi i64 [ %172, %load.padrows ], [ %216, %ld.padr.body ]
  %214 = icmp slt i64 %ld.padr, 4096
  br i1 %214, label %ld.padr.body, label %ld.padr.exit

ld.padr.body:                                     ; preds = %ld.padr.head
  %215 = getelementptr inbounds float, ptr %buf0, i64 %ld.padr
  store float 0.000000e+00, ptr %215, align 4, !alias.scope !12, !noalias !11
  %216 = add nsw i64 %ld.padr, 1
  br label %ld.padr.head

ld.padr.exit:                                     ; preds = %ld.padr.head
  %217 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %218 = call i64 @llvm.smax.i64(i64 %217, i64 0)
  %219 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %220 = call i64 @llvm.smax.i64(i64 %219, i64 0)
  %221 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %222 = call i64 @llvm.smax.i64(i64 %221, i64 0)
  %223 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %224 = call i64 @llvm.smax.i64(i64 %223, i64 0)
  %225 = mul i64 0, %b.stride0
  %226 = add i64 0, %225
  %227 = mul i64 0, %b.stride1
  %228 = add i64 %226, %227
  %229 = sub i64 %b.dim0, 0
  %230 = call i64 @llvm.smin.i64(i64 %218, i64 %229)
  %231 = call i64 @llvm.smin.i64(i64 %230, i64 32)
  %232 = call i64 @llvm.smax.i64(i64 %231, i64 0)
  %233 = call i64 @llvm.smin.i64(i64 %220, i64 128)
  %234 = call i64 @llvm.smin.i64(i64 %233, i64 128)
  %235 = call i64 @llvm.smax.i64(i64 %234, i64 0)
  %nr28 = select i1 true, i64 %232, i64 0
  %nc29 = select i1 true, i64 %235, i64 0
  %win30 = getelementptr float, ptr %b.data, i64 %228
  %unit31 = icmp eq i64 %b.stride1, 1
  %236 = mul i64 %nc29, 4
  %237 = icmp eq i64 %b.stride0, %nc29
  %pf.bytes35 = select i1 %237, i64 0, i64 %236
  br i1 %unit31, label %load.unit32, label %load.strided33

load.unit32:                                      ; preds = %ld.padr.exit
  br label %ld.i.head36

load.strided33:                                   ; preds = %ld.padr.exit
  br label %ld.i.head53

load.padrows34:                                   ; preds = %ld.i.exit55, %ld.i.exit38
  %238 = mul i64 %nr28, 128
  br label %ld.padr.head65

ld.i.head36:                                      ; preds = %ld.padc.exit51, %load.unit32
  %ld.i39 = phi i64 [ 0, %load.unit32 ], [ %262, %ld.padc.exit51 ]
  %239 = icmp slt i64 %ld.i39, %nr28
  br i1 %239, label %ld.i.body37, label %ld.i.exit38

ld.i.body37:                                      ; preds = %ld.i.head36
  %240 = mul i64 %ld.i39, %b.stride0
  %241 = mul i64 %ld.i39, 128
  %242 = mul i64 8, %b.stride0
  %243 = add i64 %240, %242
  %pf.row40 = getelementptr float, ptr %win30, i64 %243
  %244 = add i64 %pf.bytes35, 63
  %245 = lshr i64 %244, 6
  br label %pf.line.head41

ld.i.exit38:                                      ; preds = %ld.i.head36
  br label %load.padrows34

pf.line.head41:                                   ; preds = %pf.line.body42, %ld.i.body37
  %pf.line44 = phi i64 [ 0, %ld.i.body37 ], [ %249, %pf.line.body42 ]
  %246 = icmp slt i64 %pf.line44, %245
  br i1 %246, label %pf.line.body42, label %pf.line.exit43

pf.line.body42:                                   ; preds = %pf.line.head41
  %247 = mul i64 %pf.line44, 64
  %248 = getelementptr i8, ptr %pf.row40, i64 %247
  call void @llvm.prefetch.p0(ptr %248, i32 0, i32 3, i32 1)
  %249 = add nsw i64 %pf.line44, 1
  br label %pf.line.head41

pf.line.exit43:                                   ; preds = %pf.line.head41
  br label %ld.j.head45

ld.j.head45:                                      ; preds = %ld.j.body46, %pf.line.exit43
  %ld.j48 = phi i64 [ 0, %pf.line.exit43 ], [ %256, %ld.j.body46 ]
  %250 = icmp slt i64 %ld.j48, %nc29
  br i1 %250, label %ld.j.body46, label %ld.j.exit47

ld.j.body46:                                      ; preds = %ld.j.head45
  %251 = add i64 %240, %ld.j48
  %252 = getelementptr inbounds float, ptr %win30, i64 %251
  %253 = load float, ptr %252, align 4, !alias.scope !11, !noalias !12
  %254 = add i64 %241, %ld.j48
  %255 = getelementptr inbounds float, ptr %buf1, i64 %254
  store float %253, ptr %255, align 4, !alias.scope !12, !noalias !11
  %256 = add nsw i64 %ld.j48, 1
  br label %ld.j.head45

ld.j.exit47:                                      ; preds = %ld.j.head45
  %257 = add i64 %241, 128
  %258 = add i64 %241, %nc29
  br label %ld.padc.head49

ld.padc.head49:                                   ; preds = %ld.padc.body50, %ld.j.exit47
  %ld.padc52 = phi i64 [ %258, %ld.j.exit47 ], [ %261, %ld.padc.body50 ]
  %259 = icmp slt i64 %ld.padc52, %257
  br i1 %259, label %ld.padc.body50, label %ld.padc.exit51

ld.padc.body50:                                   ; preds = %ld.padc.head49
  %260 = getelementptr inbounds float, ptr %buf1, i64 %ld.padc52
  store float 0.000000e+00, ptr %260, align 4, !alias.scope !12, !noalias !11
  %261 = add nsw i64 %ld.padc52, 1
  br label %ld.padc.head49

ld.padc.exit51:                                   ; preds = %ld.padc.head49
  %262 = add nsw i64 %ld.i39, 1
  br label %ld.i.head36

ld.i.head53:                                      ; preds = %ld.padc.exit63, %load.strided33
  %ld.i56 = phi i64 [ 0, %load.strided33 ], [ %279, %ld.padc.exit63 ]
  %263 = icmp slt i64 %ld.i56, %nr28
  br i1 %263, label %ld.i.body54, label %ld.i.exit55

ld.i.body54:                                      ; preds = %ld.i.head53
  %264 = mul i64 %ld.i56, %b.stride0
  %265 = mul i64 %ld.i56, 128
  br label %ld.j.head57

ld.i.exit55:                                      ; preds = %ld.i.head53
  br label %load.padrows34

ld.j.head57:                                      ; preds = %ld.j.body58, %ld.i.body54
  %ld.j60 = phi i64 [ 0, %ld.i.body54 ], [ %273, %ld.j.body58 ]
  %266 = icmp slt i64 %ld.j60, %nc29
  br i1 %266, label %ld.j.body58, label %ld.j.exit59

ld.j.body58:                                      ; preds = %ld.j.head57
  %267 = mul i64 %ld.j60, %b.stride1
  %268 = add i64 %264, %267
  %269 = getelementptr inbounds float, ptr %win30, i64 %268
  %270 = load float, ptr %269, align 4, !alias.scope !11, !noalias !12
  %271 = add i64 %265, %ld.j60
  %272 = getelementptr inbounds float, ptr %buf1, i64 %271
  store float %270, ptr %272, align 4, !alias.scope !12, !noalias !11
  %273 = add nsw i64 %ld.j60, 1
  br label %ld.j.head57

ld.j.exit59:                                      ; preds = %ld.j.head57
  %274 = add i64 %265, 128
  %275 = add i64 %265, %nc29
  br label %ld.padc.head61

ld.padc.head61:                                   ; preds = %ld.padc.body62, %ld.j.exit59
  %ld.padc64 = phi i64 [ %275, %ld.j.exit59 ], [ %278, %ld.padc.body62 ]
  %276 = icmp slt i64 %ld.padc64, %274
  br i1 %276, label %ld.padc.body62, label %ld.padc.exit63

ld.padc.body62:                                   ; preds = %ld.padc.head61
  %277 = getelementptr inbounds float, ptr %buf1, i64 %ld.padc64
  store float 0.000000e+00, ptr %277, align 4, !alias.scope !12, !noalias !11
  %278 = add nsw i64 %ld.padc64, 1
  br label %ld.padc.head61

ld.padc.exit63:                                   ; preds = %ld.padc.head61
  %279 = add nsw i64 %ld.i56, 1
  br label %ld.i.head53

ld.padr.head65:                                   ; preds = %ld.padr.body66, %load.padrows34
  %ld.padr68 = phi i64 [ %238, %load.padrows34 ], [ %282, %ld.padr.body66 ]
  %280 = icmp slt i64 %ld.padr68, 4096
  br i1 %280, label %ld.padr.body66, label %ld.padr.exit67

ld.padr.body66:                                   ; preds = %ld.padr.head65
  %281 = getelementptr inbounds float, ptr %buf1, i64 %ld.padr68
  store float 0.000000e+00, ptr %281, align 4, !alias.scope !12, !noalias !11
  %282 = add nsw i64 %ld.padr68, 1
  br label %ld.padr.head65

ld.padr.exit67:                                   ; preds = %ld.padr.head65
  %283 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %284 = call i64 @llvm.smax.i64(i64 %283, i64 0)
  %285 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %286 = call i64 @llvm.smax.i64(i64 %285, i64 0)
  br label %ew.head

ew.head:                                          ; preds = %ew.body, %ld.padr.exit67
  %ew = phi i64 [ 0, %ld.padr.exit67 ], [ %294, %ew.body ]
  %287 = icmp slt i64 %ew, 4096
  br i1 %287, label %ew.body, label %ew.exit

ew.body:                                          ; preds = %ew.head
  %288 = getelementptr inbounds float, ptr %buf0, i64 %ew
  %289 = load float, ptr %288, align 4, !alias.scope !12, !noalias !11
  %290 = getelementptr inbounds float, ptr %buf1, i64 %ew
  %291 = load float, ptr %290, align 4, !alias.scope !12, !noalias !11
  %292 = fadd float %289, %291
  %293 = getelementptr inbounds float, ptr %buf0, i64 %ew
  store float %292, ptr %293, align 4, !alias.scope !12, !noalias !11
  %294 = add nsw i64 %ew, 1
  br label %ew.head

ew.exit:                                          ; preds = %ew.head
  %295 = mul i64 0, %c.stride0
  %296 = add i64 0, %295
  %297 = mul i64 0, %c.stride1
  %298 = add i64 %296, %297
  %299 = sub i64 %c.dim0, 0
  %300 = call i64 @llvm.smin.i64(i64 %284, i64 %299)
  %301 = call i64 @llvm.smin.i64(i64 %300, i64 32)
  %302 = call i64 @llvm.smax.i64(i64 %301, i64 0)
  %303 = call i64 @llvm.smin.i64(i64 %286, i64 128)
  %304 = call i64 @llvm.smin.i64(i64 %303, i64 128)
  %305 = call i64 @llvm.smax.i64(i64 %304, i64 0)
  %nr69 = select i1 true, i64 %302, i64 0
  %nc70 = select i1 true, i64 %305, i64 0
  %win71 = getelementptr float, ptr %c.data, i64 %298
  %unit72 = icmp eq i64 %c.stride1, 1
  br i1 %unit72, label %store.unit, label %store.strided

store.unit:                                       ; preds = %ew.exit
  br label %st.i.head

store.strided:                                    ; preds = %ew.exit
  br label %st.i.head73

store.done:                                       ; preds = %st.i.exit75, %st.i.exit
  br label %stream.done

st.i.head:                                        ; preds = %st.j.exit, %store.unit
  %st.i = phi i64 [ 0, %store.unit ], [ %316, %st.j.exit ]
  %306 = icmp slt i64 %st.i, %nr69
  br i1 %306, label %st.i.body, label %st.i.exit

st.i.body:                                        ; preds = %st.i.head
  %307 = mul i64 %st.i, %c.stride0
  %308 = mul i64 %st.i, 128
  br label %st.j.head

st.i.exit:                                        ; preds = %st.i.head
  br label %store.done

st.j.head:                                        ; preds = %st.j.body, %st.i.body
  %st.j = phi i64 [ 0, %st.i.body ], [ %315, %st.j.body ]
  %309 = icmp slt i64 %st.j, %nc70
  br i1 %309, label %st.j.body, label %st.j.exit

st.j.body:                                        ; preds = %st.j.head
  %310 = add i64 %308, %st.j
  %311 = getelementptr inbounds float, ptr %buf0, i64 %310
  %312 = load float, ptr %311, align 4, !alias.scope !12, !noalias !11
  %313 = add i64 %307, %st.j
  %314 = getelementptr inbounds float, ptr %win71, i64 %313
  store float %312, ptr %314, align 4, !alias.scope !11, !noalias !12
  %315 = add nsw i64 %st.j, 1
  br label %st.j.head

st.j.exit:                                        ; preds = %st.j.head
  %316 = add nsw i64 %st.i, 1
  br label %st.i.head

st.i.head73:                                      ; preds = %st.j.exit79, %store.strided
  %st.i76 = phi i64 [ 0, %store.strided ], [ %328, %st.j.exit79 ]
  %317 = icmp slt i64 %st.i76, %nr69
  br i1 %317, label %st.i.body74, label %st.i.exit75

st.i.body74:                                      ; preds = %st.i.head73
  %318 = mul i64 %st.i76, %c.stride0
  %319 = mul i64 %st.i76, 128
  br label %st.j.head77

st.i.exit75:                                      ; preds = %st.i.head73
  br label %store.done

st.j.head77:                                      ; preds = %st.j.body78, %st.i.body74
  %st.j80 = phi i64 [ 0, %st.i.body74 ], [ %327, %st.j.body78 ]
  %320 = icmp slt i64 %st.j80, %nc70
  br i1 %320, label %st.j.body78, label %st.j.exit79

st.j.body78:                                      ; preds = %st.j.head77
  %321 = add i64 %319, %st.j80
  %322 = getelementptr inbounds float, ptr %buf0, i64 %321
  %323 = load float, ptr %322, align 4, !alias.scope !12, !noalias !11
  %324 = mul i64 %st.j80, %c.stride1
  %325 = add i64 %318, %324
  %326 = getelementptr inbounds float, ptr %win71, i64 %325
  store float %323, ptr %326, align 4, !alias.scope !11, !noalias !12
  %327 = add nsw i64 %st.j80, 1
  br label %st.j.head77

st.j.exit79:                                      ; preds = %st.j.head77
  %328 = add nsw i64 %st.i76, 1
  br label %st.i.head73

after.return:                                     ; No predecessors!
  ret i32 0
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i64 @llvm.smin.i64(i64, i64) #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i64 @llvm.smax.i64(i64, i64) #1

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite, inaccessiblemem: readwrite)
declare void @llvm.prefetch.p0(ptr nocapture readonly, i32 immarg, i32 immarg, i32 immarg) #2

attributes #0 = { nounwind }
attributes #1 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { nocallback nofree nosync nounwind willreturn memory(argmem: readwrite, inaccessiblemem: readwrite) }

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
