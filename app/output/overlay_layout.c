/* camclass — where the overlay's parts go for an output size (overlay_draw_state.h): the
 * panel, the letterboxed frame, the rows that fit, the ROI and the map over the frame. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "overlay_draw_state.h"

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

enum { FONT_MIN_PX = 10 }; // fitting_px's floor, as the small font's

/* Body text size for a window: about 1/32 of the height (15 px at 480, 22 px at 720), and
 * 12 px at least (readable on a 480 × 320 screen); fitting_px goes down to FONT_MIN_PX to show
 * every row. */
static int body_px(int w, int h)
{
    int s = h < w ? h : w * 3 / 4;
    return clampi(s / 32, 12, 40);
}

/* The panel: 30 % of the width, at least 16 body-text ems (labels stay readable at 640 × 480),
 * at most half. */
int cc_overlay_panel_width(int w, int px)
{
    return clampi(w * 3 / 10, 16 * px, w / 2);
}

static void set_rgb(uint8_t dst[3], const uint8_t src[3])
{
    memcpy(dst, src, 3);
}

/* Computes the layout for output size w × h with fonts of body size px. Panel, top to bottom:
 * title, backend, device, rows (label line, then bar), ...; at the bottom stats and help. */
void cc_overlay_layout_compute(const struct cc_overlay_draw *ov, int w, int h, int px,
                               struct cc_overlay_layout *L)
{
    memset(L, 0, sizeof(*L));
    L->width = w;
    L->height = h;
    set_rgb(L->bar_rgb, BAR);
    set_rgb(L->track_rgb, TRACK);
    set_rgb(L->background_rgb, BACKGROUND);
    set_rgb(L->panel_rgb, PANEL);

    int pad = px * 3 / 4;
    int line = px * 5 / 4, small_line = px, title_line = px * 3 / 2;
    int panel_w = ov->frame_only ? 0 : cc_overlay_panel_width(w, px);
    L->header = (struct cc_overlay_rect){w - panel_w + pad, pad, panel_w - 2 * pad,
                                         title_line + 2 * small_line};
    L->panel = (struct cc_overlay_rect){w - panel_w, 0, panel_w, h};
    L->frame_area = (struct cc_overlay_rect){0, 0, w - panel_w, h};
    // A grid tile (high enough): the caption at the top, the frame under it.
    if (ov->caption[0] && h > 2 * (line + pad / 2)) {
        L->caption = (struct cc_overlay_rect){0, 0, w - panel_w, line + pad / 2};
        L->frame_area.y = L->caption.h;
        L->frame_area.h -= L->caption.h;
    }

    // Letterbox: the largest frame_w : frame_h rectangle in frame_area, centred.
    const struct cc_overlay_rect *a = &L->frame_area;
    if (ov->frame_tex && a->w > 0 && a->h > 0) {
        int dw, dh;
        if ((long long)a->w * ov->frame_h <= (long long)a->h * ov->frame_w) {
            dw = a->w;
            dh = (int)(((long long)a->w * ov->frame_h * 2 + ov->frame_w) / (2LL * ov->frame_w));
        } else {
            dh = a->h;
            dw = (int)(((long long)a->h * ov->frame_w * 2 + ov->frame_h) / (2LL * ov->frame_h));
        }
        L->frame = (struct cc_overlay_rect){a->x + (a->w - dw) / 2, a->y + (a->h - dh) / 2, dw, dh};
    }

    int x = L->panel.x + pad, inner = panel_w - 2 * pad;
    int y = pad + title_line + 2 * small_line + pad;
    int bar_h = clampi(px / 2, 4, 16), row_h = line + bar_h + pad * 2 / 3;
    L->stats = (struct cc_overlay_rect){
        x, h - pad - ov->help_lines * small_line - pad / 2 - 3 * line, inner, 3 * line};
    L->help = (struct cc_overlay_rect){x, h - pad - ov->help_lines * small_line, inner,
                                       ov->help_lines * small_line};
    L->notice =
        (struct cc_overlay_rect){a->x + pad, a->y + a->h - pad - line, a->w - 2 * pad, line};
    L->collect = L->notice;
    L->collect.y -= line + pad / 2;
    int n = ov->top_k;
    if (ov->have_result && ov->result.n_top < n)
        n = ov->result.n_top; // a model with fewer classes than top_k: only its classes
    while (n > 0 && y + n * row_h > L->stats.y - pad)
        n--; // a small window shows fewer rows rather than drawing them over the stats
    L->n_rows = n;
    for (int i = 0; i < n; i++) {
        L->label[i] = (struct cc_overlay_rect){x, y, inner, line};
        L->bar[i] = (struct cc_overlay_rect){x, y + line, inner, bar_h};
        y += row_h;
    }
}

/* The body size for w x h: body_px, made smaller (down to FONT_MIN_PX) while the rows the
 * result has do not all fit; only below that are rows left out. */
int cc_overlay_fitting_px(const struct cc_overlay_draw *ov, int w, int h)
{
    int want = ov->top_k, px = body_px(w, h);
    if (ov->caption[0] && ov->frame_only)
        return px; // a grid tile has no rows
    if (ov->have_result && ov->result.n_top < want)
        want = ov->result.n_top;
    for (; px > FONT_MIN_PX; px--) {
        struct cc_overlay_layout L;
        cc_overlay_layout_compute(ov, w, h, px, &L);
        if (L.n_rows >= want)
            break;
    }
    return px;
}

/* L->roi and L->roi_rgb: the ROI the result shown was classified on (cc_result.roi, so that
 * it follows --roi, the model's and a reload's), scaled into L->frame (w = 0: none). A pixel
 * ROI outside this frame is not drawn (the pipeline says so, once). */
void cc_overlay_roi_place(const struct cc_overlay_draw *ov, struct cc_overlay_layout *L)
{
    struct cc_roi_rect r;
    const struct cc_roi *roi = &ov->result.roi;
    L->roi = (struct cc_overlay_rect){0};
    memcpy(L->roi_rgb, ROI_LINE, 3);
    if (!ov->have_result || roi->kind == CC_ROI_NONE || !ov->frame_tex || ov->frame_w <= 0 ||
        ov->frame_h <= 0 || !cc_roi_rect(roi, ov->frame_w, ov->frame_h, &r, NULL))
        return;
    const struct cc_overlay_rect *f = &L->frame;
    int x0 = f->x + (int)((long long)r.x * f->w / ov->frame_w);
    int y0 = f->y + (int)((long long)r.y * f->h / ov->frame_h);
    int x1 = f->x + (int)((long long)(r.x + r.w) * f->w / ov->frame_w);
    int y1 = f->y + (int)((long long)(r.y + r.h) * f->h / ov->frame_h);
    L->roi = (struct cc_overlay_rect){x0, y0, x1 - x0 > 1 ? x1 - x0 : 1, y1 - y0 > 1 ? y1 - y0 : 1};
}

/* L->cam: where the result's map goes (draw_cam). */
void cc_overlay_cam_place(const struct cc_overlay_draw *ov, struct cc_overlay_layout *L)
{
    const struct cc_result_cam *cam = &ov->result.cam;
    L->cam = (struct cc_overlay_rect){0};
    if (!ov->have_result || !ov->frame_tex || cam->w <= 0 || cam->h <= 0)
        return;
    const struct cc_overlay_rect *f = &L->frame;
    int x0 = f->x + (int)lroundf(cam->area[0] * (float)f->w);
    int y0 = f->y + (int)lroundf(cam->area[1] * (float)f->h);
    int x1 = f->x + (int)lroundf((cam->area[0] + cam->area[2]) * (float)f->w);
    int y1 = f->y + (int)lroundf((cam->area[1] + cam->area[3]) * (float)f->h);
    L->cam = (struct cc_overlay_rect){x0, y0, x1 - x0, y1 - y0};
}

/* The size drawn for: the area (a grid's tile), else the renderer's output. */
int cc_overlay_output_size(const struct cc_overlay_draw *ov, int *w, int *h)
{
    if (ov->area_set) {
        *w = ov->area.w, *h = ov->area.h;
        return 0;
    }
    return SDL_GetRendererOutputSize(ov->renderer, w, h);
}

void cc_overlay_draw_layout(const struct cc_overlay_draw *ov, struct cc_overlay_layout *out)
{
    int w = 0, h = 0;
    cc_overlay_output_size(ov, &w, &h);
    cc_overlay_layout_compute(ov, w, h, cc_overlay_fitting_px(ov, w, h), out);
    cc_overlay_roi_place(ov, out);
    cc_overlay_cam_place(ov, out);
    snprintf(out->title, sizeof(out->title), "%s", ov->text[T_TITLE].str);
    snprintf(out->source_line, sizeof(out->source_line), "%s", ov->text[T_CAMERA].str);
    if (ov->have_result && ov->result.n_top > 0)
        snprintf(out->first_label, sizeof(out->first_label), "%s", ov->text[T_LABEL0].str);
    if (ov->notice[0])
        snprintf(out->notice_text, sizeof(out->notice_text), "%s", ov->text[T_NOTICE].str);
    if (ov->collect[0])
        snprintf(out->collect_text, sizeof(out->collect_text), "%s", ov->text[T_COLLECT].str);
    if (ov->caption[0])
        snprintf(out->caption_text, sizeof(out->caption_text), "%s", ov->text[T_CAPTION].str);
}
