import { z } from "zod";

export const StageSchema = z.enum(["pre", "exec", "post"]);

export const CategorySchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  aliases: z.array(z.string()).default([]),
  description: z.string().default(""),
});

export const ModeSchema = z.object({
  code: z.string().regex(/^\d+\.\d+$/, "a mode code looks like 1.3"),
  name: z.string().min(1),
  category: z.string().min(1),
  stages: z.array(StageSchema).default([]),
  definition: z.string().min(1),
  aliases: z.array(z.string()).default([]),
});

/** A taxonomy as data: the built-in MAST v3, or a custom one loaded from JSON. */
export const TaxonomyDataSchema = z
  .object({
    id: z.string().min(1),
    version: z.string().min(1),
    title: z.string().min(1),
    source: z.string().optional(),
    categories: z.array(CategorySchema).min(1),
    modes: z.array(ModeSchema).min(1),
    notes: z.array(z.string()).default([]),
  })
  .superRefine((t, ctx) => {
    const cats = new Set(t.categories.map((c) => c.id));
    const seen = new Set<string>();
    t.modes.forEach((m, i) => {
      if (!cats.has(m.category))
        ctx.addIssue({ code: "custom", path: ["modes", i, "category"], message: `unknown category ${m.category}` });
      if (seen.has(m.code)) ctx.addIssue({ code: "custom", path: ["modes", i, "code"], message: `duplicate code ${m.code}` });
      seen.add(m.code);
    });
  });

export type Stage = z.infer<typeof StageSchema>;
export type Category = z.infer<typeof CategorySchema>;
export type Mode = z.infer<typeof ModeSchema>;
export type TaxonomyData = z.input<typeof TaxonomyDataSchema>;
